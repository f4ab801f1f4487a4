package mcp

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"corral/app/wire"
)

// ownShapes are the JSON shapes app/mcp declares itself, which no Corral
// method answers: file_read's structured content is file.read's answer
// without the bytes (the content carries them), and read_multiple_files
// has no method of its own.
var ownShapes = []string{"readOut", "readManyOut", "readManyFile", "readManyIn"}

// TestAnswersDeclaredOnce: the tools' output schemas, and the CLI that
// carries `corral mcp` (and `corral link`, `open`, `approve`, `undo`,
// `links`), read each method's answer from its one declaration (app/wire)
// instead of a struct of their own: no named struct with JSON tags is
// declared in app/mcp beyond ownShapes (a one-member peek at an answer or
// a JSON-RPC envelope may be anonymous), nor any struct in the CLI's
// files.
func TestAnswersDeclaredOnce(t *testing.T) {
	t.Parallel()
	own, _ := filepath.Glob("*.go")
	cli := []string{"../cli.go", "../approve.go", "../undo.go", "../mcp.go"}
	for _, f := range append(own, cli...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, name := range jsonStructs(t, f) {
			if !slices.Contains(cli, f) && (slices.Contains(ownShapes, name) || strings.HasPrefix(name, "a struct")) {
				continue
			}
			t.Errorf("%s declares %s with JSON tags: read the method's answer from its declaration in app/wire", f, name)
		}
	}
}

// jsonStructs names the struct types in file f (anonymous ones by their
// line) that have a field with a json tag.
func jsonStructs(t *testing.T, f string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, f, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	named := map[*ast.StructType]string{}
	ast.Inspect(file, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok {
			if st, ok := ts.Type.(*ast.StructType); ok {
				named[st] = ts.Name.Name
			}
		}
		return true
	})
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		for _, fl := range st.Fields.List {
			if fl.Tag != nil && strings.Contains(fl.Tag.Value, `json:"`) {
				name, ok := named[st]
				if !ok {
					name = fmt.Sprintf("a struct at line %d", fset.Position(st.Pos()).Line)
				}
				out = append(out, name)
				break
			}
		}
		return true
	})
	return out
}

// TestOutputMembersDeclared: each member an output schema states is one
// of the answer's declaration, and a name that is not stops the tool list
// from being made (a renamed field is caught here, not by a client).
func TestOutputMembersDeclared(t *testing.T) {
	t.Parallel()
	s := outputSchema[wire.LinkResult](agentMembers["generate_link"]...)
	if got := slices.Sorted(maps.Keys(s.Properties)); !reflect.DeepEqual(got, []string{"expiresAt", "path", "url"}) {
		t.Errorf("generate_link states %v", got)
	}
	if !reflect.DeepEqual(s.Required, []string{"url", "path", "expiresAt"}) {
		t.Errorf("generate_link requires %v", s.Required)
	}
	if d := s.Properties["url"].Description; d != "the link" {
		t.Errorf("url's description %q is not its declaration's jsonschema tag", d)
	}
	defer func() {
		if recover() == nil {
			t.Error("a member the answer does not declare was stated")
		}
	}()
	outputSchema[wire.LinkResult]("link")
}
