package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient connects the official Go SDK client to r, over stdio (`corral
// mcp`) or over streamable HTTP (POST /mcp).
func mcpClient(t *testing.T, r *running, transport string) *sdk.ClientSession {
	t.Helper()
	return mcpClientKey(t, r, transport, r.agentKey)
}

// mcpClientKey is mcpClient with the key of another client (or the owner).
func mcpClientKey(t *testing.T, r *running, transport, key string) *sdk.ClientSession {
	t.Helper()
	var tr sdk.Transport
	switch transport {
	case "stdio":
		cmd := exec.Command(r.bin, "mcp")
		cmd.Env = r.envWith(key)
		tr = &sdk.CommandTransport{Command: cmd}
	case "http":
		tr = &sdk.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{key}}}
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callMCP calls a tool and fails the test on a protocol error; tool
// errors come back as isError results for the caller to check.
func callMCP(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// toolSchemas lists the tools' input schemas as the client sees them, as
// plain JSON values.
func toolSchemas(t *testing.T, cs *sdk.ClientSession) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tl := range list.Tools {
		raw, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = m
	}
	return out
}

func schemaProp(t *testing.T, schemas map[string]map[string]any, tool, prop string) map[string]any {
	t.Helper()
	props, _ := schemas[tool]["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	if p == nil {
		t.Fatalf("%s has no property %q in its input schema: %v", tool, prop, schemas[tool])
	}
	return p
}

// TestMCPFileReadLongLineHint reads files whose line is longer than
// file_read returns: the hint must not offer a line that is not there, and
// the run_command it suggests must really give the rest of the line.
func TestMCPFileReadLongLineHint(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := mcpClient(t, r, transport)
			long := strings.Repeat("x", 300_000)
			if res := callMCP(t, cs, "file_write", map[string]any{"path": "long/" + transport + ".txt", "content": long}); res.IsError {
				t.Fatalf("file_write: %s", textOf(t, res))
			}
			res := callMCP(t, cs, "file_read", map[string]any{"path": "long/" + transport + ".txt"})
			text := textOf(t, res)
			if res.IsError || !strings.HasPrefix(text, strings.Repeat("x", 256<<10)) {
				t.Fatalf("file_read: isError=%v, %d bytes", res.IsError, len(text))
			}
			hint := strings.TrimLeft(text, "x")
			if strings.Contains(hint, "offset=2") {
				t.Errorf("the hint offers line 2 of a one-line file: %q", hint)
			}
			if !strings.Contains(hint, "longer than file_read returns") || !strings.Contains(hint, "run_command") {
				t.Errorf("the hint does not say the line is too long for file_read and to use run_command: %q", hint)
			}
			cmd := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(hint)
			if cmd == nil || !strings.Contains(cmd[1], "tail -c +262145") {
				t.Fatalf("no command to read on in the hint: %q", hint)
			}
			// The suggested command gives exactly the rest of the line.
			run := callMCP(t, cs, "run_command", map[string]any{"command": cmd[1]})
			var out struct {
				ExitCode int    `json:"exitCode"`
				Stdout   string `json:"stdout"`
			}
			if run.IsError || json.Unmarshal([]byte(textOf(t, run)), &out) != nil {
				t.Fatalf("run_command %q: %s", cmd[1], textOf(t, run))
			}
			if out.ExitCode != 0 || out.Stdout != long[256<<10:] {
				t.Errorf("run_command %q: exit %d, %d bytes of stdout, want %d", cmd[1], out.ExitCode, len(out.Stdout), len(long)-256<<10)
			}
		})
	}

	t.Run("more lines after the long one", func(t *testing.T) {
		cs := mcpClient(t, r, "http")
		content := strings.Repeat("y", 300_000) + "\nsecond line\n"
		if res := callMCP(t, cs, "file_write", map[string]any{"path": "long/two.txt", "content": content}); res.IsError {
			t.Fatalf("file_write: %s", textOf(t, res))
		}
		hint := strings.TrimLeft(textOf(t, callMCP(t, cs, "file_read", map[string]any{"path": "long/two.txt"})), "y")
		if !strings.Contains(hint, "longer than file_read returns") || !strings.Contains(hint, "offset=2") {
			t.Errorf("hint: %q", hint)
		}
		if res := callMCP(t, cs, "file_read", map[string]any{"path": "long/two.txt", "offset": 2}); res.IsError || textOf(t, res) != "second line\n" {
			t.Errorf("following the hint: isError=%v %q", res.IsError, textOf(t, res))
		}
		// A long line after shorter ones is left whole for the next call,
		// and offset= still leads to it.
		content = "first\n" + strings.Repeat("z", 300_000) + "\n"
		callMCP(t, cs, "file_write", map[string]any{"path": "long/three.txt", "content": content})
		text := textOf(t, callMCP(t, cs, "file_read", map[string]any{"path": "long/three.txt"}))
		if !strings.HasPrefix(text, "first\n") || !strings.Contains(text, "Call file_read with offset=2") {
			t.Errorf("whole lines, then a long one: %q", text)
		}
		hint = strings.TrimLeft(textOf(t, callMCP(t, cs, "file_read", map[string]any{"path": "long/three.txt", "offset": 2})), "z")
		if strings.Contains(hint, "offset=3") || !strings.Contains(hint, "sed -n 2p") {
			t.Errorf("line 2 cut: %q", hint)
		}
	})
}

// TestMCPRunCommandReason: run_command takes the optional reason that
// command.run shows the owner.
func TestMCPRunCommandReason(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "http")
	schemas := toolSchemas(t, cs)
	if d, _ := schemaProp(t, schemas, "run_command", "reason")["description"].(string); d == "" {
		t.Error("run_command's reason has no description")
	}
	res := callMCP(t, cs, "run_command", map[string]any{"command": "echo hi", "reason": "to say hi"})
	if res.IsError || !strings.Contains(textOf(t, res), `"stdout":"hi\n"`) {
		t.Errorf("run_command with a reason: isError=%v %s", res.IsError, textOf(t, res))
	}
}

// TestMCPApplyPatch: apply_patch applies a Codex patch through the daemon,
// and a hunk that does not match comes back as an isError result naming
// the file, with nothing written.
func TestMCPApplyPatch(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "http")
	if d, _ := schemaProp(t, toolSchemas(t, cs), "apply_patch", "patch")["description"].(string); !strings.Contains(d, "*** Begin Patch") {
		t.Errorf("apply_patch's patch description: %q", d)
	}
	res := callMCP(t, cs, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p.txt\n+one\n+two\n*** End Patch\n"})
	if res.IsError || !strings.Contains(textOf(t, res), `"path":"p.txt","action":"created"`) {
		t.Fatalf("apply_patch: isError=%v %s", res.IsError, textOf(t, res))
	}
	res = callMCP(t, cs, "apply_patch", map[string]any{"patch": "--- a/p.txt\n+++ b/p.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+3\n"})
	if text := textOf(t, res); !res.IsError || !strings.Contains(text, "p.txt") || !strings.HasSuffix(text, "(conflict)") {
		t.Errorf("conflict: isError=%v %q", res.IsError, text)
	}
	res = callMCP(t, cs, "file_read", map[string]any{"path": "p.txt"})
	if text := textOf(t, res); !strings.Contains(text, "one\ntwo\n") {
		t.Errorf("p.txt after a failed patch: %s", text)
	}
}

// TestMCPGenerateLinkExpiresIn: expires_in is a number of seconds or a
// duration string, as in docs/protocol.md section 10.
func TestMCPGenerateLinkExpiresIn(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "http")
	prop := schemaProp(t, toolSchemas(t, cs), "generate_link", "expires_in")
	// One type (a union such as ["integer", "string"] is refused by some
	// clients); numbers are still accepted on the wire, below.
	if prop["type"] != "string" || prop["pattern"] == nil {
		t.Errorf("expires_in: type %v, pattern %v; want a string with a pattern", prop["type"], prop["pattern"])
	}
	if d, _ := prop["description"].(string); !strings.Contains(d, "3600") || !strings.Contains(d, `"7d"`) {
		t.Errorf("expires_in description: %q", d)
	}
	if res := callMCP(t, cs, "file_write", map[string]any{"path": "output/l.txt", "content": "x"}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	for _, c := range []struct {
		in   any
		want time.Duration
	}{{3600, time.Hour}, {"2h", 2 * time.Hour}, {json.Number("7200"), 2 * time.Hour}, {"1800", 30 * time.Minute}, {"1d12h", 36 * time.Hour}} {
		before := time.Now()
		res := callMCP(t, cs, "generate_link", map[string]any{"path": "output/l.txt", "expires_in": c.in})
		var out struct{ URL, ExpiresAt string }
		if res.IsError || json.Unmarshal([]byte(textOf(t, res)), &out) != nil {
			t.Errorf("expires_in %v: isError=%v %s", c.in, res.IsError, textOf(t, res))
			continue
		}
		at, err := time.Parse(time.RFC3339, out.ExpiresAt)
		if err != nil || at.Before(before.Add(c.want-2*time.Second)) || at.After(time.Now().Add(c.want+2*time.Second)) {
			t.Errorf("expires_in %v: expiresAt %q, want about %v from now", c.in, out.ExpiresAt, c.want)
		}
	}
	// The daemon's own sentence for a bad value.
	res := callMCP(t, cs, "generate_link", map[string]any{"path": "output/l.txt", "expires_in": "soon"})
	if !res.IsError || !strings.Contains(textOf(t, res), "expires_in") {
		t.Errorf("bad expires_in: isError=%v %s", res.IsError, textOf(t, res))
	}
}

// TestMCPSchemasForLLMs: every reason is described, closed choices are
// enums, and context is a plain described object that still accepts null.
func TestMCPSchemasForLLMs(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "stdio")
	schemas := toolSchemas(t, cs)
	for tool, s := range schemas {
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", tool, name)
			}
		}
		if _, ok := props["context"]; ok {
			if c := schemaProp(t, schemas, tool, "context"); c["type"] != "object" {
				t.Errorf("%s.context type %v, want object", tool, c["type"])
			}
		}
	}
	for _, c := range []struct {
		tool, prop string
		enum       []any
	}{{"save_result_page", "format", []any{"markdown", "html"}}, {"file_write", "encoding", []any{"utf8", "base64"}}} {
		if got, _ := schemaProp(t, schemas, c.tool, c.prop)["enum"].([]any); !slices.Equal(got, c.enum) {
			t.Errorf("%s.%s enum %v, want %v", c.tool, c.prop, got, c.enum)
		}
	}
	res := callMCP(t, cs, "save_result_page", map[string]any{"title": "T", "content": "x", "format": "pdf"})
	if !res.IsError {
		t.Errorf("format=pdf accepted: %s", textOf(t, res))
	}
	// An explicit null context still means no context.
	callMCP(t, cs, "file_write", map[string]any{"path": "n.txt", "content": "null ctx"})
	if res := callMCP(t, cs, "file_read", map[string]any{"path": "n.txt", "context": nil}); res.IsError || textOf(t, res) != "null ctx" {
		t.Errorf("context null: isError=%v %s", res.IsError, textOf(t, res))
	}
	// The owner is offered context; an empty one means no context.
	owner := mcpClientKey(t, r, "stdio", r.ownerKey)
	callMCP(t, owner, "file_write", map[string]any{"path": "n.txt", "content": "owner's"})
	if res := callMCP(t, owner, "file_read", map[string]any{"path": "n.txt", "context": map[string]any{"user_id": ""}}); res.IsError || textOf(t, res) != "owner's" {
		t.Errorf("empty context: isError=%v %s", res.IsError, textOf(t, res))
	}
	// Any optional argument given as null is left out.
	if res := callMCP(t, cs, "generate_link", map[string]any{"path": "n.txt", "expires_in": nil}); res.IsError || !strings.Contains(textOf(t, res), "/files/out?path=n.txt&token=") {
		t.Errorf("expires_in null: isError=%v %s", res.IsError, textOf(t, res))
	}
}

// TestMCPMissingArguments: a missing required argument or a misnamed one
// comes back as an isError result with a sentence, not validator jargon.
func TestMCPMissingArguments(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := mcpClient(t, r, transport)
			for _, c := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"file_read", map[string]any{}, "file_read needs a value for path (the file to read)."},
				{"file_read", nil, "file_read needs a value for path (the file to read)."},
				{"file_read", map[string]any{"path": nil}, "file_read needs a value for path (the file to read)."},
				{"file_edit", map[string]any{"path": "a.txt"}, "file_edit needs values for old_text (the exact text to replace"},
				{"file_move", map[string]any{}, "file_move needs values for from (the path to move) and to (the new path, "},
				{"file_read", map[string]any{"file_path": "a.txt"}, "file_read has no parameter file_path; its parameters are path, offset, limit, tail, encoding, byte_offset and reason."},
			} {
				res := callMCP(t, cs, c.tool, c.args)
				text := textOf(t, res)
				if !res.IsError || !strings.HasPrefix(text, c.want) || !strings.HasSuffix(text, ".") || strings.Contains(text, "validating") {
					t.Errorf("%s %v: isError=%v %q, want a sentence starting %q", c.tool, c.args, res.IsError, text, c.want)
				}
			}
			// A value that does not fit its schema: Corral's sentence,
			// not the validator's.
			res := callMCP(t, cs, "file_read", map[string]any{"path": "a.txt", "offset": "ten"})
			if text := textOf(t, res); !res.IsError || text != `file_read's offset must be a whole number from 1 to 2147483647, not "ten".` {
				t.Errorf("offset=\"ten\": isError=%v %q", res.IsError, text)
			}
			// The daemon's own errors are left as they are.
			res = callMCP(t, cs, "file_read", map[string]any{"path": "no/such.txt"})
			if text := textOf(t, res); !res.IsError || !strings.HasSuffix(text, "(not_found)") {
				t.Errorf("missing file: isError=%v %q", res.IsError, text)
			}
		})
	}
}

// TestMCPToolListPerClient: the context parameter is offered only to a
// client that may act for others (here the owner), over both transports;
// no input schema has a type union; and the list without context is
// smaller.
func TestMCPToolListPerClient(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			size := map[string]int{}
			for who, key := range map[string]string{"agent": r.agentKey, "owner": r.ownerKey} {
				cs := mcpClientKey(t, r, transport, key)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				list, err := cs.ListTools(ctx, nil)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(list.Tools)
				size[who] = len(raw)
				for name, s := range toolSchemas(t, cs) {
					props, _ := s["properties"].(map[string]any)
					if _, ok := props["context"]; ok != (who == "owner") {
						t.Errorf("%s: %s offers context: %v", who, name, ok)
					}
					walkSchema(s, func(p map[string]any) {
						if _, union := p["type"].([]any); union {
							t.Errorf("%s: %s has a type union: %v", who, name, p)
						}
					})
				}
			}
			t.Logf("tool list: %d bytes without context, %d with", size["agent"], size["owner"])
			if size["agent"] >= size["owner"] {
				t.Errorf("the tool list without context is %d bytes, with %d", size["agent"], size["owner"])
			}
		})
	}
}

// walkSchema calls f on s and every schema below it.
func walkSchema(s map[string]any, f func(map[string]any)) {
	f(s)
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				walkSchema(m, f)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			walkSchema(m, f)
		}
	}
}
