package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolBudget is what one tool may cost in tools/list, on average: 1.3×
// @modelcontextprotocol/server-filesystem's. Its tools/list (version
// 2026.8.31, as app/testdata/mcp-node installs it; 14 tools with output
// schemas) is 12,973 bytes of compact JSON, 926.6 bytes a tool;
// 1.3 × 926.6 = 1204. (Corral's was 1,692.6 a tool before the path rules
// went into the instructions, 17 tools, 28,774 bytes.)
const toolBudget = 1204

// TestToolListBudget: the tool list an agent sees (no context parameter)
// costs at most toolBudget bytes a tool, descriptions, input and output
// schemas and annotations together, and says the path rules nowhere but
// in the server's instructions.
func TestToolListBudget(t *testing.T) {
	t.Parallel()
	cs, _ := connectFake(t, &fakeBackend{}, Options{}, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(list.Tools)
	per := float64(len(raw)) / float64(len(list.Tools))
	t.Logf("%d tools, %d bytes, %.1f a tool (budget %d)", len(list.Tools), len(raw), per, toolBudget)
	if per > toolBudget {
		for _, tl := range list.Tools {
			b, _ := json.Marshal(tl)
			t.Logf("%-20s %5d", tl.Name, len(b))
		}
		t.Errorf("the tool list costs %.1f bytes a tool, more than the budget of %d (1.3× server-filesystem's)", per, toolBudget)
	}
	if n := bytes.Count(raw, []byte("relative to your private folder")); n > 0 {
		t.Errorf("the path rules are in %d tools; they belong in the instructions only", n)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, pathRules) {
		t.Errorf("the instructions do not say the path rules: %q", cs.InitializeResult().Instructions)
	}
}

// noDefault are the numeric arguments without a default: leaving tail out
// means reading from offset, not the last N lines.
var noDefault = map[string]bool{"file_read.tail": true}

// TestSchemasExact: every numeric argument of every tool (with and
// without context) states its minimum and maximum, and its default unless
// leaving it out means something else; no schema, input or output, has a
// type union or anything else the Inspector's --strict lint reports; each
// tool's annotations are as listed.
func TestSchemasExact(t *testing.T) {
	t.Parallel()
	annotations := map[string]string{ // readOnly destructive idempotent openWorld
		"file_read": "r--c", "read_multiple_files": "r--c", "file_stat": "r--c", "document_read": "r--c",
		"folder_list": "r--c", "file_find": "r--c", "file_grep": "r--c", "session_info": "r--c",
		"file_write": "-d-c", "file_edit": "-d-c", "apply_patch": "-d-c", "file_move": "-d-c",
		"file_delete": "-dic", "folder_create": "--ic", "save_result_page": "---c", "generate_link": "---c",
		"run_command": "-d-o",
	}
	for _, others := range []bool{false, true} {
		cs, _ := connectFake(t, &fakeBackend{}, Options{ActsForOthers: others}, nil)
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			var in, out jsonschema.Schema
			b, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(b, &in)
			b, _ = json.Marshal(tl.OutputSchema)
			json.Unmarshal(b, &out)
			walk(&in, tl.Name, func(at string, s *jsonschema.Schema) {
				if len(s.Types) > 0 {
					t.Errorf("input %s has a type union %v", at, s.Types)
				}
				if s.Type != "integer" && s.Type != "number" {
					return
				}
				if s.Minimum == nil || s.Maximum == nil || (s.Default == nil && !noDefault[at]) {
					t.Errorf("input %s: minimum %v, maximum %v, default %s; want all three", at, s.Minimum, s.Maximum, s.Default)
				}
			})
			walk(&out, tl.Name, func(at string, s *jsonschema.Schema) {
				if len(s.Types) > 0 {
					t.Errorf("output %s has a type union %v", at, s.Types)
				}
			})
			portable(t, tl.Name+" input", tl.InputSchema, "")
			portable(t, tl.Name+" output", tl.OutputSchema, "")
			a := tl.Annotations
			got := []byte("----")
			if a.ReadOnlyHint {
				got[0] = 'r'
			}
			if a.DestructiveHint != nil && *a.DestructiveHint {
				got[1] = 'd'
			}
			if a.IdempotentHint {
				got[2] = 'i'
			}
			got[3] = 'c'
			if a.OpenWorldHint == nil || *a.OpenWorldHint {
				got[3] = 'o'
			}
			if string(got) != annotations[tl.Name] {
				t.Errorf("%s: annotations %s, want %s", tl.Name, got, annotations[tl.Name])
			}
		}
	}
}

// portable fails on what the MCP Inspector's --strict schema lint
// reports (its core/json/schemaLint.ts): a type array, a bare true or
// false where a schema object belongs, and a schema that constrains
// nothing.
func portable(t *testing.T, at string, schema any, keyword string) {
	t.Helper()
	var node any
	b, _ := json.Marshal(schema)
	json.Unmarshal(b, &node)
	switch n := node.(type) {
	case bool:
		if keyword != "additionalProperties" {
			t.Errorf("%s: a bare %v for a schema", at, n)
		}
		return
	case map[string]any:
		if _, union := n["type"].([]any); union {
			t.Errorf("%s: a type union %v", at, n["type"])
		}
		constrains := false
		for _, k := range []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "properties", "items", "required", "$ref", "additionalProperties"} {
			_, ok := n[k]
			constrains = constrains || ok
		}
		if !constrains && keyword != "not" {
			t.Errorf("%s: a schema that constrains nothing: %v", at, n)
		}
		if props, ok := n["properties"].(map[string]any); ok {
			for k, p := range props {
				portable(t, at+"."+k, p, "properties")
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not"} {
			if p, ok := n[k]; ok {
				portable(t, at+"."+k, p, k)
			}
		}
		if branches, ok := n["anyOf"].([]any); ok {
			for i, p := range branches {
				portable(t, fmt.Sprintf("%s.anyOf[%d]", at, i), p, "anyOf")
			}
		}
	}
}

// walk calls f with every schema in s, named tool.property.field.
func walk(s *jsonschema.Schema, at string, f func(at string, s *jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(at, s)
	for k, p := range s.Properties {
		walk(p, at+"."+k, f)
	}
	walk(s.Items, at+"[]", f)
	walk(s.AdditionalProperties, at+".*", f)
}

// TestBinarySentOnce: a base64 read sends the bytes once, in the text
// content, and structuredContent has the rest of file.read's answer;
// every result stays under maxAnswer encoded.
func TestBinarySentOnce(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18) // 1 MiB (app's TestMCPBigBinaryRead reads 4 MiB)
	answer := map[string]any{"type": "binary", "path": "b.bin", "bytes": len(data), "encoding": "base64", "offset": 0, "length": len(data), "data": data}
	b := &fakeBackend{answer: answerWith(answer)}
	cs, _ := connectFake(t, b, Options{}, nil)
	res := callBig(t, cs, "file_read", map[string]any{"path": "b.bin", "encoding": "base64"})
	if res.IsError {
		t.Fatal(resultText(t, res))
	}
	var text struct{ Data string }
	if err := json.Unmarshal([]byte(resultText(t, res)), &text); err != nil {
		t.Fatal(err)
	}
	if got, _ := base64.StdEncoding.DecodeString(text.Data); !bytes.Equal(got, data) {
		t.Errorf("the text content's data is %d bytes, want the 1 MiB", len(got))
	}
	structured, _ := json.Marshal(res.StructuredContent)
	if bytes.Contains(structured, []byte(`"data"`)) || !bytes.Contains(structured, []byte(`"length":1048576`)) {
		t.Errorf("structuredContent: %.300s", structured)
	}
	whole, _ := json.Marshal(res)
	if len(whole) > 1500000 {
		t.Errorf("the answer is %d bytes, want the 1 MiB in base64 once (1.4 MB)", len(whole))
	}
	if calls := b.recorded(); len(calls) != 1 || calls[0].params["encoding"] != "base64" || calls[0].params["limit"] != nil {
		t.Errorf("file.read asked %v", calls)
	}
}

// TestAnswersUnderTheLimit: what would make an answer larger than a
// client takes in one message (10 MiB) is refused or left for another
// call, in a sentence saying how to read it: an image too large to send
// whole, and the files of read_multiple_files beyond the limit.
func TestAnswersUnderTheLimit(t *testing.T) {
	t.Parallel()
	// file.read's answer for an image of 8 MiB (its data left short here).
	cs, _ := connectFake(t, &fakeBackend{answer: answerWith(map[string]any{"type": "image", "path": "big.png", "bytes": 8 << 20, "mimeType": "image/png", "data": []byte("…")})}, Options{}, nil)
	res := callTool(t, cs, "file_read", map[string]any{"path": "big.png"})
	if got := resultText(t, res); !res.IsError || !strings.Contains(got, "encoding=base64 and byte_offset") {
		t.Errorf("an 8 MiB image: isError=%v %.300q", res.IsError, got)
	}

	// 20 texts of 256 KiB of quotes: 1 MiB encoded each (in content and
	// in structuredContent): 9 fit.
	text := strings.Repeat(`"`, 256<<10)
	cs, _ = connectFake(t, &fakeBackend{answer: answerWith(map[string]any{"type": "text", "path": "q.txt", "bytes": len(text), "content": text, "totalLines": 1, "outputLines": 1})}, Options{}, nil)
	var paths []string
	for i := range maxReadMany {
		paths = append(paths, fmt.Sprintf("q%d.txt", i))
	}
	res = callBig(t, cs, "read_multiple_files", map[string]any{"paths": paths})
	whole, _ := json.Marshal(res)
	var out readManyOut
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	read := 0
	for _, f := range out.Files {
		if f.Error == "" {
			read++
		}
	}
	last := res.Content[len(res.Content)-1].(*sdk.TextContent).Text
	if res.IsError || len(whole) > maxAnswer || read == 0 || read == maxReadMany || len(out.Files) != maxReadMany ||
		!strings.Contains(last, "Call read_multiple_files again with those paths") || !strings.Contains(last, paths[maxReadMany-1]) {
		t.Errorf("%d files read of %d, answer %d bytes (limit %d), last text %.300q", read, len(out.Files), len(whole), maxAnswer, last)
	}
	t.Logf("%d of 20 files read, %d bytes", read, len(whole))
}

// TestCommandTimeoutStated: run_command's timeout_ms takes from 1 s to
// the owner's exec.timeout, which is also its default (2 minutes when
// not said).
func TestCommandTimeoutStated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		timeout time.Duration
		want    float64
	}{{0, 120000}, {10 * time.Minute, 600000}} {
		cs, _ := connectFake(t, &fakeBackend{}, Options{CommandTimeout: c.timeout}, nil)
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name != "run_command" {
				continue
			}
			var s jsonschema.Schema
			b, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(b, &s)
			p := s.Properties["timeout_ms"]
			if *p.Minimum != 1000 || *p.Maximum != c.want || string(p.Default) != fmt.Sprint(c.want) {
				t.Errorf("CommandTimeout %v: timeout_ms from %v to %v, default %s; want 1000 to %v", c.timeout, *p.Minimum, *p.Maximum, p.Default, c.want)
			}
		}
	}
}

// callBig is callTool for answers of megabytes, which take a while under
// -race on a loaded machine.
func callBig(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// TestEveryBadArgumentInCorralsWords: for every argument of every tool,
// a value of the wrong type, and for numbers one below and one above its
// bounds, is refused in Corral's sentence naming the tool and the
// argument, never in the validator's words, and the backend is not
// called.
func TestEveryBadArgumentInCorralsWords(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs, _ := connectFake(t, b, Options{ActsForOthers: true}, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range list.Tools {
		var s jsonschema.Schema
		raw, _ := json.Marshal(tl.InputSchema)
		json.Unmarshal(raw, &s)
		for name, p := range s.Properties {
			var bad []any
			switch p.Type {
			case "string":
				bad = []any{5, true}
			case "integer", "number":
				bad = []any{"x", *p.Minimum - 1, *p.Maximum + 1}
				if p.Type == "integer" {
					bad = append(bad, *p.Minimum+0.5)
				}
			case "boolean":
				bad = []any{"yes", 1}
			case "array":
				bad = []any{"x", []any{5}}
			case "object":
				bad = []any{5, map[string]any{"no_such_field": 1}}
			}
			for _, v := range bad {
				args := map[string]any{}
				for _, req := range s.Required {
					switch s.Properties[req].Type {
					case "array":
						args[req] = []string{"a"}
					default:
						args[req] = "a"
					}
				}
				args[name] = v
				res := callTool(t, cs, tl.Name, args)
				got := resultText(t, res)
				n++
				if !res.IsError || !strings.HasPrefix(got, tl.Name+"'s "+name) || strings.Contains(got, "validating") || strings.Contains(got, "input schema") {
					t.Errorf("%s %s=%v: isError=%v %q, want a sentence starting %q", tl.Name, name, v, res.IsError, got, tl.Name+"'s "+name)
				}
			}
		}
	}
	if calls := b.recorded(); len(calls) > 0 {
		t.Errorf("the backend was called for arguments refused before it: %v", calls)
	}
	t.Logf("%d bad arguments refused", n)
}
