package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/wire"
)

// toolMethods is the WebSocket method behind each tool.
var toolMethods = map[string]string{
	"file_read": "file.read", "read_multiple_files": "file.read", "file_stat": "file.stat",
	"document_read": "file.document_read", "file_write": "file.write", "file_edit": "file.edit",
	"apply_patch": "file.apply_patch", "folder_list": "folder.list", "file_find": "file.find",
	"file_grep": "file.grep", "folder_create": "folder.create", "file_delete": "file.delete",
	"file_move": "file.move", "run_command": "command.run", "save_result_page": "result.save",
	"generate_link": "link.create", "session_info": "session.info",
}

// onlyMCP are the arguments a tool has that its method does not, each
// translated by the tool's handler; onlyWS the method's parameters a tool
// leaves out, each for a reason.
var (
	onlyMCP = map[string][]string{
		"read_multiple_files": {"paths"}, // one file.read per path
	}
	onlyWS = map[string][]string{
		"read_multiple_files": {"path", "offset", "limit", "tail", "encoding", "byte_offset"}, // the first lines of each, as text
		"run_command":         {"stream"},                                                     // set by runHandler when the client wants progress
	}
)

// TestParamsAgree checks, for every tool that is also a WebSocket method,
// that the tool's input schema (as tools/list shows it) and the method's
// params in app/wire have the same names, the same required ones and
// the same JSON types, but for the differences listed above.
func TestParamsAgree(t *testing.T) {
	t.Parallel()
	tools := listTools(t)
	if len(tools) != len(toolMethods) {
		t.Errorf("%d tools listed, %d in toolMethods", len(tools), len(toolMethods))
	}
	for _, tool := range tools {
		method, ok := toolMethods[tool.Name]
		if !ok {
			t.Errorf("tool %s: which method does it call? (add it to toolMethods)", tool.Name)
			continue
		}
		params, ok := wire.Params[method]
		if !ok {
			t.Errorf("tool %s: method %s is not in wire.Params", tool.Name, method)
			continue
		}
		var in jsonschema.Schema
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("tool %s: input schema: %v", tool.Name, err)
		}
		agree(t, tool.Name, method, "", &in, params)
	}
}

// agree compares the properties of schema s with the JSON fields of
// struct t, and objects inside them (context, edits) with theirs;
// required-ness only at the top, where rpc:"required" applies.
func agree(t *testing.T, tool, method, at string, s *jsonschema.Schema, typ reflect.Type) {
	t.Helper()
	ws := wsParams(typ)
	for name, p := range s.Properties {
		f, ok := ws[name]
		switch {
		case slices.Contains(onlyMCP[tool], at+name):
			if ok {
				t.Errorf("tool %s: %s is listed as MCP only but %s has it", tool, at+name, method)
			}
		case !ok:
			t.Errorf("tool %s has argument %s; %s has no such parameter", tool, at+name, method)
		case f.typ != "" && f.typ != p.Type:
			t.Errorf("tool %s: %s is %q, in %s %q", tool, at+name, p.Type, method, f.typ)
		case at == "" && f.required != slices.Contains(s.Required, name):
			t.Errorf("tool %s: %s required %v, in %s %v", tool, name, slices.Contains(s.Required, name), method, f.required)
		case f.elem != nil && p.Type == "object":
			agree(t, tool, method, at+name+".", p, f.elem)
		case f.elem != nil && p.Type == "array" && p.Items != nil:
			agree(t, tool, method, at+name+"[].", p.Items, f.elem)
		}
	}
	for name := range ws {
		if _, ok := s.Properties[name]; !ok && !slices.Contains(onlyWS[tool], at+name) {
			t.Errorf("%s has parameter %s; tool %s does not offer it", method, at+name, tool)
		}
	}
}

type wsParam struct {
	typ      string       // the JSON Schema type; "" for any JSON
	required bool         // rpc:"required"
	elem     reflect.Type // the struct inside an object or array field
}

// wsParams lists the JSON parameters of a wire params type.
func wsParams(t reflect.Type) map[string]wsParam {
	out := map[string]wsParam{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		out[name] = wsParam{typ: jsonType(f.Type), required: f.Tag.Get("rpc") == "required", elem: inner(f.Type)}
	}
	return out
}

// inner is the struct a field of type t holds, through pointers and
// slices; nil for anything else.
func inner(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return nil
	}
	return t
}

func jsonType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return ""
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[[]byte]():
		return "string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonType(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// listTools returns the tools a client that may act for others sees (the
// one list with every parameter, context included).
func listTools(t *testing.T) []*sdk.Tool {
	t.Helper()
	ctx := t.Context()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := NewServer(echoBackend{}, "test", Options{ActsForOthers: true}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.WithoutCancel(ctx), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}
