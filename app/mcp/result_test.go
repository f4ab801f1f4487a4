package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/wire"
)

// TestOneTextResultEncodesAsTheSDK: the one-pass encoding of a tool's
// result says what the SDK's encoding says, for every shape a tool
// returns (and falls back to the SDK's for the others).
func TestOneTextResultEncodesAsTheSDK(t *testing.T) {
	t.Parallel()
	by := "bytes"
	text := "line <1> & \"two\"\n\u2028\ttab \x01 \xff caf\u00e9 😀\n"
	for name, res := range map[string]*sdk.CallToolResult{
		"text only":   {Content: []sdk.Content{&sdk.TextContent{Text: text}}},
		"empty text":  {Content: []sdk.Content{&sdk.TextContent{}}},
		"raw":         {Content: []sdk.Content{&sdk.TextContent{Text: `{"a":1}`}}, StructuredContent: json.RawMessage(`{"a":1,"b":"<x>"}`)},
		"text shape":  {Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: wire.TextShape{Type: "text", Path: "a<b>.txt", Content: text, Bytes: 9, TotalLines: 3, OutputLines: 2, Truncated: true, TruncatedBy: &by, Encoding: "latin1"}},
		"untruncated": {Content: []sdk.Content{&sdk.TextContent{Text: "x"}}, StructuredContent: wire.TextShape{Type: "text", Path: "p", Content: "x"}},
		"error":       {Content: []sdk.Content{&sdk.TextContent{Text: "It failed (not_found)"}}, IsError: true},
		"struct":      {Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: readOut{Type: "binary", Path: "b"}},
		"meta":        {Meta: sdk.Meta{"k": "v"}, Content: []sdk.Content{&sdk.TextContent{Text: "t"}}},
		"image":       {Content: []sdk.Content{&sdk.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}},
		"two texts":   {Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
	} {
		want, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(oneTextResult{res})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", name, err, got)
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestOldNameStillWorks: create_directory, folder_create's name before,
// is not in the list but a call by it is folder_create's.
func TestOldNameStillWorks(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs, _ := connectFake(t, b, Options{}, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "create_directory" {
			t.Error("create_directory is listed")
		}
	}
	if res := callTool(t, cs, "create_directory", map[string]any{"path": "d"}); res.IsError {
		t.Fatalf("create_directory: %s", resultText(t, res))
	}
	if got := b.recorded(); len(got) != 1 || got[0].method != "folder.create" || got[0].params["path"] != "d" {
		t.Errorf("calls: %+v", got)
	}
}

// valueBackend answers file.read with a text as a value (as the daemon's
// in-process backend does) and counts the calls that went through JSON.
type valueBackend struct {
	fakeBackend
	values int
}

func (b *valueBackend) CallValue(ctx context.Context, method string, params any) (any, error) {
	b.values++
	return wire.TextShape{Type: "text", Path: "a.txt", Content: "one <two>\n", Bytes: 10, TotalLines: 1, OutputLines: 1}, nil
}

// TestReadTakesTheValue: file_read from a backend in the daemon's process
// takes the text as it is, not encoded to JSON and decoded again.
func TestReadTakesTheValue(t *testing.T) {
	t.Parallel()
	b := &valueBackend{}
	cs, _ := connectFake(t, b, Options{}, nil)
	res := callTool(t, cs, "file_read", map[string]any{"path": "a.txt"})
	if res.IsError || resultText(t, res) != "one <two>\n" {
		t.Fatalf("file_read: %v %q", res.IsError, resultText(t, res))
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), `"content":"one \u003ctwo\u003e\n"`) && !strings.Contains(string(sc), `"content":"one <two>\n"`) {
		t.Errorf("structuredContent: %s", sc)
	}
	if n := len(b.recorded()); b.values != 1 || n != 0 {
		t.Errorf("calls: %d by value, %d through JSON; want 1 and 0", b.values, n)
	}
}
