package daemon

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sizeLimit is how many lines of non-test Go code a package may have
// before its doc must say why (a paragraph starting "Size:").
const sizeLimit = 2500

// pkgInfo is one package of the tree as the house test sees it.
type pkgInfo struct {
	lines   int
	imports map[string]bool
	doc     string
}

// house reads every package of the module below root: its non-test
// lines, what it imports and its package doc.
func house(t *testing.T, root string) map[string]*pkgInfo {
	t.Helper()
	pkgs := map[string]*pkgInfo{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		name := "corral/" + filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		p := pkgs[name]
		if p == nil {
			p = &pkgInfo{imports: map[string]bool{}}
			pkgs[name] = p
		}
		p.lines += strings.Count(string(src), "\n")
		for _, im := range f.Imports {
			v, _ := strconv.Unquote(im.Path.Value)
			p.imports[v] = true
		}
		if f.Doc != nil {
			p.doc += f.Doc.Text()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestHouse checks the house drawn from its imports (issue 29): core and
// store import nothing of app or ui; only the program (app) and the
// daemon that wires it import app/server, so no room points back up at
// it; ui's windows do not import ui; and no package is above the size
// limit unless its doc says why.
func TestHouse(t *testing.T) {
	pkgs := house(t, filepath.Join("..", ".."))
	if len(pkgs) < 40 || pkgs["corral/app/server"] == nil || pkgs["corral/core/sandbox"] == nil {
		t.Fatalf("read %d packages; the walk no longer finds the tree", len(pkgs))
	}
	for name, p := range pkgs {
		for im := range p.imports {
			switch {
			case (strings.HasPrefix(name, "corral/core/") || name == "corral/store" || strings.HasPrefix(name, "corral/store/")) &&
				(strings.HasPrefix(im, "corral/app") || strings.HasPrefix(im, "corral/ui")):
				t.Errorf("%s imports %s: core and store sit below app and ui", name, im)
			case im == "corral/app/server" && name != "corral/app" && name != "corral/app/daemon":
				t.Errorf("%s imports app/server: a room must not point back up at the server", name)
			case im == "corral/ui" && strings.HasPrefix(name, "corral/ui/"):
				t.Errorf("%s imports ui: a window must not point back up at the tray", name)
			}
		}
		if p.lines > sizeLimit && !strings.Contains(p.doc, "Size:") {
			t.Errorf("%s has %d lines of non-test code, above %d, and its doc does not say why (a paragraph starting \"Size:\")", name, p.lines, sizeLimit)
		}
	}
}
