package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/rpc"
	"corral/app/wire"
)

// These tests drive the tools as an MCP client does, over the SDK's
// in-memory transport, against fakeBackend: what the tools send to
// Corral's methods and what they make of the answers, without a daemon.
// app's mcp_*_test.go run the same tools end to end.

// fakeBackend records each call and answers it with answer (nil: the
// params echoed back as the result).
type fakeBackend struct {
	answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

	mu    sync.Mutex
	calls []fakeCall
}

type fakeCall struct {
	method string
	params map[string]any
}

func (b *fakeBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := rpc.Marshal(params)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.calls = append(b.calls, fakeCall{method, m})
	b.mu.Unlock()
	if b.answer == nil {
		return raw, nil
	}
	return b.answer(ctx, method, raw)
}

// recorded returns the calls made so far.
func (b *fakeBackend) recorded() []fakeCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// answerWith answers every call with v, encoded as Corral's backends
// encode answers (rpc.Marshal).
func answerWith(v any) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return rpc.Marshal(v) }
}

// kindErr is a Corral error as a backend returns it.
type kindErr struct{ msg, kind string }

func (e kindErr) Error() string { return e.msg }
func (e kindErr) Kind() string  { return e.kind }

// sentMethods records the methods of the messages a connection writes.
type sentMethods struct {
	sdk.Connection
	mu   sync.Mutex
	sent []string
}

func (c *sentMethods) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		c.sent = append(c.sent, r.Method)
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *sentMethods) has(method string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.sent, method)
}

// recordingTransport is a client transport whose connection is a
// sentMethods, kept in conn.
type recordingTransport struct {
	sdk.Transport
	conn *sentMethods
}

func (t *recordingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &sentMethods{Connection: c}
	return t.conn, nil
}

// connectFake connects a client (with copts, which may be nil) to
// NewServer(b, "test", o) in memory; the client's transport records what
// it sends.
func connectFake(t *testing.T, b Backend, o Options, copts *sdk.ClientOptions) (*sdk.ClientSession, *recordingTransport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(b, "test", o).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := &recordingTransport{Transport: ct}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, copts).Connect(ctx, rt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs, rt
}

// callTool calls a tool and fails the test on a protocol error; tool errors
// come back as isError results.
func callTool(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// resultText is a result's content as one string: its text blocks joined.
func resultText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var sb strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		sb.WriteString(tc.Text)
	}
	return sb.String()
}

// await waits up to 10 s for a value from ch.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// toolCases is every tool, the Corral method it performs, its required
// parameters and the least arguments that call it.
type toolCase struct {
	name, method string
	required     []string
	args         map[string]any
}

var toolCases = []toolCase{
	{"file_read", "file.read", []string{"path"}, map[string]any{"path": "a.txt"}},
	{"read_multiple_files", "file.read", []string{"paths"}, map[string]any{"paths": []string{"a.txt"}}},
	{"file_stat", "file.stat", []string{"path"}, map[string]any{"path": "a.txt"}},
	{"document_read", "file.document_read", []string{"path"}, map[string]any{"path": "a.pdf"}},
	{"file_write", "file.write", []string{"path", "content"}, map[string]any{"path": "a.txt", "content": "x"}},
	{"file_edit", "file.edit", []string{"path"}, map[string]any{"path": "a.txt", "old_text": "x", "new_text": "y"}},
	{"apply_patch", "file.apply_patch", []string{"patch"}, map[string]any{"patch": "*** Begin Patch\n*** End Patch"}},
	{"folder_list", "folder.list", nil, map[string]any{}},
	{"file_find", "file.find", []string{"pattern"}, map[string]any{"pattern": "*.md"}},
	{"file_grep", "file.grep", []string{"pattern"}, map[string]any{"pattern": "x"}},
	{"folder_create", "folder.create", []string{"path"}, map[string]any{"path": "d"}},
	{"file_delete", "file.delete", []string{"path"}, map[string]any{"path": "a.txt"}},
	{"file_move", "file.move", []string{"from", "to"}, map[string]any{"from": "a.txt", "to": "b.txt"}},
	{"run_command", "command.run", []string{"command"}, map[string]any{"command": "true"}},
	{"save_result_page", "result.save", []string{"title", "content"}, map[string]any{"title": "T", "content": "x"}},
	{"generate_link", "link.create", []string{"path"}, map[string]any{"path": "a.txt"}},
	{"session_info", "session.info", nil, map[string]any{}},
}

// TestToolList: the client sees every tool, in a stable set, each with a
// title, a description, its required parameters, a description for every
// parameter, one type per property and an output schema; context is
// offered only with ActsForOthers.
func TestToolList(t *testing.T) {
	t.Parallel()
	for _, others := range []bool{false, true} {
		t.Run(fmt.Sprintf("ActsForOthers=%v", others), func(t *testing.T) {
			cs, _ := connectFake(t, &fakeBackend{}, Options{ActsForOthers: others}, nil)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			var want []string
			for _, c := range toolCases {
				want = append(want, c.name)
			}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			for _, tl := range list.Tools {
				i := slices.IndexFunc(toolCases, func(c toolCase) bool { return c.name == tl.Name })
				if tl.Title == "" || len(tl.Description) < 40 || tl.Annotations == nil || tl.OutputSchema == nil {
					t.Errorf("%s: title %q, description %q, annotations %v, output schema %v", tl.Name, tl.Title, tl.Description, tl.Annotations, tl.OutputSchema)
				}
				var s struct {
					Type       string                     `json:"type"`
					Required   []string                   `json:"required"`
					Properties map[string]json.RawMessage `json:"properties"`
				}
				raw, _ := json.Marshal(tl.InputSchema)
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatal(err)
				}
				if s.Type != "object" || !slices.Equal(s.Required, toolCases[i].required) {
					t.Errorf("%s: type %q, required %v, want object with %v", tl.Name, s.Type, s.Required, toolCases[i].required)
				}
				if _, ok := s.Properties["context"]; ok != others {
					t.Errorf("%s offers context: %v", tl.Name, ok)
				}
				for name, p := range s.Properties {
					var prop struct {
						Type        any    `json:"type"`
						Description string `json:"description"`
					}
					json.Unmarshal(p, &prop)
					if prop.Description == "" {
						t.Errorf("%s.%s has no description", tl.Name, name)
					}
					if _, union := prop.Type.([]any); union {
						t.Errorf("%s.%s has a type union %v", tl.Name, name, prop.Type)
					}
				}
			}
		})
	}
}

// TestToolMethods: each tool performs its Corral method once, with the
// arguments as the client gave them, and answers the method's result as
// both text and structuredContent.
func TestToolMethods(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{answer: answerWith(map[string]any{"type": "text", "path": "a.txt", "content": "hello", "totalLines": 1, "outputLines": 1})}
	cs, _ := connectFake(t, b, Options{}, nil)
	for _, c := range toolCases {
		before := len(b.recorded())
		res := callTool(t, cs, c.name, c.args)
		calls := b.recorded()[before:]
		if res.IsError || len(calls) != 1 || calls[0].method != c.method {
			t.Errorf("%s: isError=%v %q, calls %v, want one %s", c.name, res.IsError, resultText(t, res), calls, c.method)
			continue
		}
		for k, v := range c.args {
			if k == "paths" {
				k, v = "path", "a.txt"
			}
			if fmt.Sprint(calls[0].params[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s reached %s as %v, want %v", c.name, k, c.method, calls[0].params[k], v)
			}
		}
		if res.StructuredContent == nil {
			t.Errorf("%s: no structuredContent", c.name)
		}
	}
}

// TestArgumentProblems: arguments that are missing, unknown, of the wrong
// type or that contradict each other come back as an isError result with
// a sentence naming the tool and the argument, and the backend is not
// called.
func TestArgumentProblems(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs, _ := connectFake(t, b, Options{}, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // the sentence starts so
	}{
		{"file_read", map[string]any{}, "file_read needs a value for path (the file to read)."},
		{"file_read", nil, "file_read needs a value for path (the file to read)."},
		{"file_read", map[string]any{"path": nil}, "file_read needs a value for path (the file to read)."},
		{"file_move", map[string]any{}, "file_move needs values for from (the path to move) and to (the new path, "},
		{"file_edit", map[string]any{"path": "a.txt"}, "file_edit needs values for old_text (the exact text to replace) and new_text (the replacement text), or a list of edits."},
		{"file_read", map[string]any{"file_path": "a.txt"}, "file_read has no parameter file_path; its parameters are path, offset, limit, tail, encoding, byte_offset and reason. It needs a value for path"},
		{"file_stat", map[string]any{"path": "a", "x": 1, "y": 2}, "file_stat has no parameters x and y; its parameters are path and reason."},
		{"file_read", map[string]any{"path": "a", "context": map[string]any{}}, "file_read has no parameter context;"},
		{"file_read", map[string]any{"path": "a.txt", "offset": "ten"}, `file_read's offset must be a whole number from 1 to 2147483647, not "ten".`},
		{"file_read", map[string]any{"path": "a.txt", "limit": 2001}, "file_read's limit must be a whole number from 1 to 2000, not 2001."},
		{"file_read", map[string]any{"path": "a.txt", "limit": 0}, "file_read's limit must be a whole number from 1 to 2000, not 0."},
		{"file_read", map[string]any{"path": "a.txt", "limit": 2.5}, "file_read's limit must be a whole number from 1 to 2000, not 2.5."},
		{"file_read", map[string]any{"path": "a.txt", "tail": true}, "file_read's tail must be a whole number from 1 to 2000, not true."},
		{"folder_list", map[string]any{"depth": 6}, "folder_list's depth must be a whole number from 1 to 5, not 6."},
		{"file_grep", map[string]any{"pattern": "x", "max_matches": 0}, "file_grep's max_matches must be a whole number from 1 to 1000, not 0."},
		{"document_read", map[string]any{"path": "a.pdf", "offset": -1}, "document_read's offset must be a whole number from 1 to "},
		{"run_command", map[string]any{"command": "x", "timeout_ms": 1}, "run_command's timeout_ms must be a whole number from 1000 to 120000, not 1."},
		{"run_command", map[string]any{"command": "x", "env": map[string]any{"A": 1}}, "run_command's env.A must be a string, not 1."},
		{"run_command", map[string]any{"command": "x", "network": "yes"}, `run_command's network must be true or false, not "yes".`},
		{"file_edit", map[string]any{"path": "a", "edits": []any{map[string]any{"old_text": "a"}}}, "file_edit's edits[0] needs a value for new_text."},
		{"file_edit", map[string]any{"path": "a", "edits": []any{map[string]any{"old_text": "a", "new_text": "b", "x": 1}}}, "file_edit's edits[0] has no field x; its fields are old_text, new_text and replace_all."},
		{"file_write", map[string]any{"path": "a", "content": 5}, "file_write's content must be a string, not 5."},
		{"save_result_page", map[string]any{"title": "T", "content": "x", "format": "pdf"}, `save_result_page's format must be one of markdown or html, not "pdf".`},
		{"generate_link", map[string]any{"path": "a", "expires_in": "soon"}, `generate_link's expires_in must be seconds ("3600") or a duration such as "30m", "1h" or "7d", not "soon".`},
		{"generate_link", map[string]any{"path": "a", "expires_in": "1ms"}, `generate_link's expires_in must be at least 1m (60 seconds), not "1ms": `},
		{"generate_link", map[string]any{"path": "a", "expires_in": 59}, `generate_link's expires_in must be at least 1m (60 seconds), not "59s": `},
		{"run_command", map[string]any{"command": "x", "package_managers": []string{"brew"}}, `run_command's package_managers[0] must be one of apt, cargo, git-hosts, go, npm or pip, not "brew".`},
		{"file_read", map[string]any{"path": "a", "encoding": "base64", "tail": 3}, "With encoding=base64, give byte_offset (and no tail, offset or limit)"},
		{"file_read", map[string]any{"path": "a", "byte_offset": 10}, "byte_offset is for encoding=base64;"},
		{"file_read", map[string]any{"path": "a", "tail": 3, "limit": 3}, "Give tail or offset/limit, not both."},
		{"file_read", map[string]any{"path": "a", "tail": 3, "offset": 2}, "Give tail or offset/limit, not both."},
		{"read_multiple_files", map[string]any{"paths": []string{}}, "read_multiple_files's paths must be a list of 1 to 20 items, not []."},
	} {
		res := callTool(t, cs, c.tool, c.args)
		got := resultText(t, res)
		if !res.IsError || !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, ".") || strings.Contains(got, "validating") || strings.Contains(got, "input schema") {
			t.Errorf("%s %v: isError=%v %q, want a sentence starting %q", c.tool, c.args, res.IsError, got, c.want)
		}
	}
	if calls := b.recorded(); len(calls) > 0 {
		t.Errorf("the backend was called for arguments refused before it: %v", calls)
	}
}

// TestArgumentsThatAreNotValues: arguments that are not an object, or an
// argument the SDK cannot decode (a number beyond float64), are refused
// in a sentence naming the tool (and the argument), never in Go's words
// ("json: cannot unmarshal … into Go value of type map[string]interface {}").
func TestArgumentsThatAreNotValues(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs, _ := connectFake(t, b, Options{}, nil)
	for _, c := range []struct {
		args any
		want string
	}{
		{[]any{1}, "file_read's arguments must be a JSON object of named arguments."},
		{"notes.txt", "file_read's arguments must be a JSON object of named arguments."},
		{map[string]any{"path": "a.txt", "offset": json.RawMessage("1e999")}, "file_read's argument offset is not a value Corral can read (a number too large, say)."},
	} {
		res := callTool(t, cs, "file_read", c.args)
		if got := resultText(t, res); !res.IsError || got != c.want {
			t.Errorf("file_read %v: isError=%v %q, want %q", c.args, res.IsError, got, c.want)
		}
	}
	if calls := b.recorded(); len(calls) > 0 {
		t.Errorf("the backend was called for arguments refused before it: %v", calls)
	}
}

// TestArgumentsNormalised: null for an optional argument means leaving it
// out (a null context too), and generate_link's expires_in given as a
// number of seconds reaches link.create as a duration.
func TestArgumentsNormalised(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs, _ := connectFake(t, b, Options{ActsForOthers: true}, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // the params link.create or file.read gets
	}{
		{"file_read", map[string]any{"path": "a.txt", "context": nil, "limit": nil}, `{"path":"a.txt","offset":1,"limit":2000}`}, // the schema's defaults
		{"generate_link", map[string]any{"path": "a.txt", "expires_in": nil}, `{"path":"a.txt"}`},
		{"generate_link", map[string]any{"path": "a.txt", "expires_in": 3600}, `{"path":"a.txt","expires_in":"3600s"}`},
		{"generate_link", map[string]any{"path": "a.txt", "expires_in": "90"}, `{"path":"a.txt","expires_in":"90s"}`},
		{"generate_link", map[string]any{"path": "a.txt", "expires_in": "1d12h"}, `{"path":"a.txt","expires_in":"1d12h"}`},
		{"file_read", map[string]any{"path": "a.txt", "context": map[string]any{"user_id": "ann"}}, `{"path":"a.txt","offset":1,"limit":2000,"context":{"user_id":"ann"}}`},
	} {
		before := len(b.recorded())
		if res := callTool(t, cs, c.tool, c.args); res.IsError {
			t.Errorf("%s %v: %s", c.tool, c.args, resultText(t, res))
			continue
		}
		calls := b.recorded()[before:]
		got, _ := json.Marshal(calls[0].params)
		var want map[string]any
		json.Unmarshal([]byte(c.want), &want)
		if w, _ := json.Marshal(want); string(got) != string(w) {
			t.Errorf("%s %v: the backend got %s, want %s", c.tool, c.args, got, w)
		}
	}
}

// TestBackendErrors: a Corral error comes back as an isError result
// carrying its polite sentence and, in parentheses, its kind; an error
// without a kind comes back as its sentence alone. In
// read_multiple_files one file's error is that file's text, and the
// others are read.
func TestBackendErrors(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{answer: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		var p struct{ Path string }
		json.Unmarshal(params, &p)
		switch p.Path {
		case "missing.txt":
			return nil, kindErr{"There is no file missing.txt in your folder.", "not_found"}
		case "plain.txt":
			return nil, errors.New("Corral is shutting down.")
		case "nokind.txt":
			return nil, kindErr{"Something odd happened.", ""}
		}
		return rpc.Marshal(map[string]any{"type": "text", "path": p.Path, "content": "fine\n", "totalLines": 1, "outputLines": 1})
	}}
	cs, _ := connectFake(t, b, Options{}, nil)
	for _, c := range []struct{ tool, path, want string }{
		{"file_read", "missing.txt", "There is no file missing.txt in your folder. (not_found)"},
		{"file_stat", "missing.txt", "There is no file missing.txt in your folder. (not_found)"},
		{"document_read", "missing.txt", "There is no file missing.txt in your folder. (not_found)"},
		{"file_read", "plain.txt", "Corral is shutting down."},
		{"file_delete", "nokind.txt", "Something odd happened."},
	} {
		res := callTool(t, cs, c.tool, map[string]any{"path": c.path})
		if got := resultText(t, res); !res.IsError || got != c.want {
			t.Errorf("%s %s: isError=%v %q, want %q", c.tool, c.path, res.IsError, got, c.want)
		}
	}
	res := callTool(t, cs, "read_multiple_files", map[string]any{"paths": []string{"a.txt", "missing.txt", "b.txt"}})
	want := "== a.txt ==\nfine\nmissing.txt: There is no file missing.txt in your folder. (not_found)== b.txt ==\nfine\n"
	if got := resultText(t, res); res.IsError || got != want {
		t.Errorf("read_multiple_files: isError=%v %q, want %q", res.IsError, got, want)
	}
	var out readManyOut
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	if len(out.Files) != 3 || out.Files[0].Content != "fine\n" || out.Files[1].Error == "" || out.Files[1].Path != "missing.txt" || out.Files[2].Path != "b.txt" {
		t.Errorf("read_multiple_files structuredContent %s", raw)
	}
}

// TestCancelReachesBackend: a client that gives up on a call sends
// notifications/cancelled, and the backend's context for that call ends;
// the session goes on serving.
func TestCancelReachesBackend(t *testing.T) {
	t.Parallel()
	started, ended, stop := make(chan struct{}), make(chan error, 1), make(chan struct{})
	b := &fakeBackend{answer: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "command.run" {
			return params, nil
		}
		close(started)
		select {
		case <-ctx.Done():
			ended <- ctx.Err()
		case <-stop: // the test gave up: let the session close
		}
		return nil, ctx.Err()
	}}
	cs, rt := connectFake(t, b, Options{}, nil)
	t.Cleanup(func() { close(stop) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep 600"}})
		done <- err
	}()
	await(t, started, "the call to reach the backend")
	cancel()
	if err := await(t, ended, "the backend's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("the backend's context ended with %v, want canceled", err)
	}
	if err := await(t, done, "CallTool to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool: %v, want canceled", err)
	}
	if !rt.conn.has("notifications/cancelled") {
		t.Error("the client sent no notifications/cancelled")
	}
	if res := callTool(t, cs, "file_stat", map[string]any{"path": "a.txt"}); res.IsError {
		t.Errorf("after the cancel: %s", resultText(t, res))
	}
}

// TestProgress: with a progressToken, the backend gets a Progress function
// (and command.run is asked to stream), and each line it reports reaches
// the client as notifications/progress with that token and a growing
// count; without one, there is no Progress and no
// stream.
func TestProgress(t *testing.T) {
	t.Parallel()
	type note struct {
		token    any
		msg      string
		progress float64
	}
	notes := make(chan note, 10)
	var hadProgress []bool
	var mu sync.Mutex
	b := &fakeBackend{answer: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		report := Progress(ctx)
		mu.Lock()
		hadProgress = append(hadProgress, report != nil)
		mu.Unlock()
		if report != nil {
			report("Waiting for the owner's answer…")
			report("line 1")
		}
		return json.RawMessage(`{"exit_code":0}`), nil
	}}
	cs, _ := connectFake(t, b, Options{}, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		notes <- note{r.Params.ProgressToken, r.Params.Message, r.Params.Progress}
	}})

	p := &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo"}}
	p.SetProgressToken("tok-1")
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Waiting for the owner's answer…", "line 1"} {
		n := await(t, notes, "progress "+want)
		if n.token != "tok-1" || n.msg != want || n.progress != float64(i+1) {
			t.Errorf("progress %d: %+v, want token tok-1, %q, %d", i, n, want, i+1)
		}
	}
	callTool(t, cs, "run_command", map[string]any{"command": "echo"})

	calls := b.recorded()
	if len(calls) != 2 || calls[0].params["stream"] != true || calls[1].params["stream"] != nil {
		t.Errorf("stream: %v, want true with a token and absent without", calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(hadProgress, []bool{true, false}) {
		t.Errorf("Progress given: %v, want with the token only", hadProgress)
	}
	select {
	case n := <-notes:
		t.Errorf("progress without a token: %+v", n)
	default:
	}
}

// fileLines is n numbered lines.
func fileLines(first, n int) string {
	var sb strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

// TestReadBounds: the read tools ask for no more than they promise
// (tail turns into one window of lines; read_multiple_files takes
// at most 20 paths), and a result file.read cut short says how to read on.
func TestReadBounds(t *testing.T) {
	t.Parallel()
	const total = 5000
	b := &fakeBackend{answer: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		var p struct {
			Path                string
			Offset, Limit, Tail int
		}
		json.Unmarshal(params, &p)
		first, n := max(p.Offset, 1), min(p.Limit, 2000)
		if p.Limit == 0 {
			n = 2000
		}
		if p.Tail > 0 {
			first, n = max(1, total-p.Tail+1), p.Tail
		}
		n = min(n, total-first+1)
		r := map[string]any{"type": "text", "path": p.Path, "content": fileLines(first, n), "totalLines": total, "outputLines": n}
		if first+n <= total {
			r["truncated"], r["truncatedBy"] = true, "lines"
		}
		if method == "file.document_read" {
			r["format"] = "pdf"
		}
		return rpc.Marshal(r)
	}}
	cs, _ := connectFake(t, b, Options{}, nil)

	for _, c := range []struct {
		args          map[string]any
		offset, limit float64 // what file.read is asked (tail: file.read's own)
		tail          string  // how the text ends
	}{
		{map[string]any{"path": "big.txt"}, 1, 2000, "line 2000\n\n[Showing lines 1–2000 of 5000. Call file_read with offset=2001 to read on.]"}, // the schema's defaults
		{map[string]any{"path": "big.txt", "offset": 4001, "limit": 2000}, 4001, 2000, "line 5000\n"},
		{map[string]any{"path": "big.txt", "limit": 3}, 1, 3, "line 3\n\n[Showing lines 1–3 of 5000. Call file_read with offset=4 to read on.]"},
		{map[string]any{"path": "big.txt", "tail": 2}, 0, 0, "line 4999\nline 5000\n"},
	} {
		before := len(b.recorded())
		res := callTool(t, cs, "file_read", c.args)
		calls := b.recorded()[before:]
		if len(calls) != 1 {
			t.Errorf("file_read %v: %d calls of file.read, want one", c.args, len(calls))
			continue
		}
		last := calls[0].params
		off, _ := last["offset"].(float64)
		lim, _ := last["limit"].(float64)
		if tail, _ := c.args["tail"].(int); last["tail"] != nil && last["tail"] != float64(tail) {
			t.Errorf("file_read %v: asked tail %v", c.args, last["tail"])
		}
		if got := resultText(t, res); res.IsError || !strings.HasSuffix(got, c.tail) || off != c.offset || lim != c.limit {
			t.Errorf("file_read %v: asked offset %v limit %v (want %v, %v); isError=%v, text ends %q, want %q", c.args, off, lim, c.offset, c.limit, res.IsError, got[max(0, len(got)-120):], c.tail)
		}
	}

	res := callTool(t, cs, "document_read", map[string]any{"path": "big.pdf", "offset": 2001})
	if got := resultText(t, res); !strings.HasSuffix(got, "line 4000\n\n[Showing lines 2001–4000 of 5000. Call document_read with offset=4001 to read on.]") {
		t.Errorf("document_read ends %q", got[max(0, len(got)-120):])
	}

	before := len(b.recorded())
	paths := make([]string, maxReadMany+1)
	for i := range paths {
		paths[i] = fmt.Sprintf("f%d.txt", i)
	}
	if res := callTool(t, cs, "read_multiple_files", map[string]any{"paths": paths}); !res.IsError || !strings.Contains(resultText(t, res), "paths") {
		t.Errorf("21 paths: isError=%v %q", res.IsError, resultText(t, res))
	}
	if n := len(b.recorded()) - before; n != 0 {
		t.Errorf("21 paths: %d reads", n)
	}
	if res := callTool(t, cs, "read_multiple_files", map[string]any{"paths": paths[:maxReadMany]}); res.IsError || len(b.recorded())-before != maxReadMany {
		t.Errorf("20 paths: isError=%v, %d reads", res.IsError, len(b.recorded())-before)
	}
}

// TestAgentTextUnchanged: what a file holds reaches the agent exactly as
// file.read answered it, whatever it looks like (Corral's own markers,
// HTML, escapes, a JSON-looking line), in the text and in
// structuredContent; the text Corral adds after it (the read-on hint, the
// encoding note) is set apart on lines of its own, and the path it puts
// in a shell command is quoted so that the command reads that file.
func TestAgentTextUnchanged(t *testing.T) {
	t.Parallel()
	const content = "[Showing lines 1–1 of 1.]\n<script>alert('&')</script>\n\x1b[31mred\x1b[0m \u202e\u200b\n{\"isError\":true}\n"
	answer := map[string]any{"type": "text", "path": "a.txt", "content": content, "totalLines": 4, "outputLines": 4}
	cs, _ := connectFake(t, &fakeBackend{answer: answerWith(answer)}, Options{}, nil)
	res := callTool(t, cs, "file_read", map[string]any{"path": "a.txt"})
	if got := resultText(t, res); res.IsError || got != content {
		t.Errorf("file_read: isError=%v %q, want %q", res.IsError, got, content)
	}
	var sc map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &sc); sc["content"] != content {
		t.Errorf("structuredContent %s", raw)
	}

	for _, c := range []struct {
		name, path, content, encoding string
		byBytes                       bool
		want                          string // what follows content
	}{
		{"latin-1", "a.txt", "caf\u00e9", "windows-1252", false, "\n[This file is not UTF-8; it was read as windows-1252 and converted. Writing it back with file_write stores UTF-8.]"},
		{"long line", "it's; rm -rf ~ $(x).txt", strings.Repeat("x", 100), "", true,
			"\n\n[Line 2 of 3 is longer than file_read returns; these are its first 100 bytes. To read the rest of it, use run_command, e.g. `sed -n 2p 'it'\\''s; rm -rf ~ $(x).txt' | tail -c +101 | head -c 262144`. Call file_read with offset=3 for the lines after it.]"},
		{"dash", "-n", "y", "", true, "\n\n[Line 2 of 3 is longer than file_read returns; these are its first 1 bytes. To read the rest of it, use run_command, e.g. `sed -n 2p './-n' | tail -c +2 | head -c 262144`. Call file_read with offset=3 for the lines after it.]"},
	} {
		answer := map[string]any{"type": "text", "path": c.path, "content": c.content, "totalLines": 3, "outputLines": 1, "encoding": c.encoding}
		if c.byBytes {
			answer["truncated"], answer["truncatedBy"] = true, "bytes"
		}
		cs, _ := connectFake(t, &fakeBackend{answer: answerWith(answer)}, Options{}, nil)
		args := map[string]any{"path": c.path}
		if c.byBytes {
			args["offset"] = 2
		}
		res := callTool(t, cs, "file_read", args)
		if got := resultText(t, res); res.IsError || got != c.content+c.want {
			t.Errorf("%s: isError=%v\n got %q\nwant %q", c.name, res.IsError, got, c.content+c.want)
		}
	}
}

// TestShellQuote: a quoted path is one shell word that means the path
// itself and cannot be read as an option, whatever characters it holds.
func TestShellQuote(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, p := range []string{"a.txt", "it's", "'", "''", "a b\tc\nd", "$(touch x)", "`id`", "a\\'b", "-n", "--help", "*", "~/x", "\"q\""} {
		out, err := exec.Command("sh", "-c", "printf '%s|' "+shellQuote(p)).Output()
		want := p + "|"
		if p[0] == '-' {
			want = "./" + want
		}
		if err != nil || string(out) != want {
			t.Errorf("%q: quoted %s, sh saw %q (%v), want %q", p, shellQuote(p), out, err, want)
		}
	}
}

// TestReadImage: an image comes back as MCP image content with its bytes
// and type, and its structuredContent leaves the base64 data out.
func TestReadImage(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	answer := map[string]any{"type": "image", "path": "p.png", "bytes": len(png), "mimeType": "image/png", "data": png} // []byte marshals as base64
	cs, _ := connectFake(t, &fakeBackend{answer: answerWith(answer)}, Options{}, nil)
	res := callTool(t, cs, "file_read", map[string]any{"path": "p.png"})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("isError=%v content %#v", res.IsError, res.Content)
	}
	img, ok := res.Content[0].(*sdk.ImageContent)
	if !ok || string(img.Data) != string(png) || img.MIMEType != "image/png" {
		t.Fatalf("isError=%v content %#v", res.IsError, res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(raw), `"data"`) || !strings.Contains(string(raw), `"mimeType":"image/png"`) {
		t.Errorf("structuredContent %s", raw)
	}
}

// A command whose changes were not all applied (the agent's share of the
// version store is full) is an error result that says so first, with the
// command's result after it.
func TestRunNotAppliedIsError(t *testing.T) {
	t.Parallel()
	msg := "1 of the command's changes were not applied; those files are as they were before it ran. Your share of Corral's version store is full."
	b := &fakeBackend{answer: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		if strings.Contains(string(params), `"true"`) {
			return rpc.Marshal(wire.RunResult{Changes: []wire.FileChange{}})
		}
		return rpc.Marshal(wire.RunResult{ExitCode: 0, Stdout: "done", Changes: []wire.FileChange{},
			NotApplied: &wire.NotApplied{Kind: "unavailable", Message: msg, Paths: []string{"/a.txt"}, Count: 1}})
	}}
	cs, _ := connectFake(t, b, Options{}, nil)
	res := callTool(t, cs, "run_command", map[string]any{"command": "echo x > a.txt"})
	if !res.IsError || len(res.Content) != 2 {
		t.Fatalf("isError=%v with %d contents, want an error result", res.IsError, len(res.Content))
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != "corral: "+msg {
		t.Errorf("first content %#v, want the sentence", res.Content[0])
	}
	if tc, ok := res.Content[1].(*sdk.TextContent); !ok || !strings.Contains(tc.Text, `"stdout":"done"`) {
		t.Errorf("second content %#v, want the command's result", res.Content[1])
	}
	if res := callTool(t, cs, "run_command", map[string]any{"command": "true"}); res.IsError || len(res.Content) != 1 {
		t.Errorf("a command with its changes applied: isError=%v, %d contents", res.IsError, len(res.Content))
	}
}
