package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// recordedOps finds, in the module's Go sources (tests left out), every
// string that is recorded as an event's operation: arguments of record
// and begin/beginOn calls, Op fields of literals and values assigned to op or .Op.
func recordedOps(t *testing.T, root string) map[string]string {
	t.Helper()
	name := regexp.MustCompile(`^[a-z]+\.[a-z_]+$`)
	found := map[string]string{}
	note := func(fset *token.FileSet, e ast.Expr) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil && name.MatchString(s) {
			found[s] = fset.Position(lit.Pos()).String()
		}
	}
	isOp := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "op"
		case *ast.SelectorExpr:
			return x.Sel.Name == "Op"
		}
		return false
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "record" || sel.Sel.Name == "begin" || sel.Sel.Name == "beginOn" || sel.Sel.Name == "BeginOn") {
					for _, a := range x.Args {
						note(fset, a)
					}
				}
			case *ast.CompositeLit:
				for _, el := range x.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Op" {
							note(fset, kv.Value)
						}
					}
				}
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if isOp(l) && i < len(x.Rhs) {
						note(fset, x.Rhs[i])
					}
				}
			case *ast.ValueSpec:
				for i, n := range x.Names {
					if n.Name == "op" && i < len(x.Values) {
						note(fset, x.Values[i])
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Every operation the server can record has a label: the dashboard shows
// the label, and an operation missing from the table would show its bare
// name.
func TestEveryRecordedOperationHasALabel(t *testing.T) {
	known := map[string]bool{}
	for _, o := range Operations {
		if o.Label == "" || known[o.Name] {
			t.Errorf("operation %q: empty label or listed twice", o.Name)
		}
		known[o.Name] = true
	}
	found := recordedOps(t, filepath.Join("..", ".."))
	for _, must := range []string{"file.read", "command.run", "rule.create", "network.connect", "device.pair", "agent.pause", "files.out", "links.rotate"} {
		if _, ok := found[must]; !ok {
			t.Errorf("the source scan missed %s: it no longer finds what is recorded", must)
		}
	}
	for op, where := range found {
		if !known[op] {
			t.Errorf("%s records %q, which has no label in audit.Operations", where, op)
		}
	}
}

func TestGroups(t *testing.T) {
	looks := OpsIn(GroupLooks)
	if len(looks) == 0 || looks[0] != "file.read" {
		t.Errorf("looks = %v", looks)
	}
	for _, op := range Housekeeping {
		if !strings.Contains(op, ".") {
			t.Errorf("housekeeping op %q", op)
		}
	}
}
