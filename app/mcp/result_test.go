package mcp

import (
	"context"
	"encoding/json"
	"reflect"
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
