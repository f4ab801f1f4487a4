package server

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"corral/assets"
)

// importRe finds a module's static imports and re-exports, a statement
// at the start of a line: `import { a } from './x.js'` and `import './x.js'`.
var importRe = regexp.MustCompile(`(?m)^(?:(?:import|export)\s[^;']*?from|import)\s*'([^']+)'`)

// The shell preloads every module the dashboard loads (each view's
// folder, lib/ and lib/dom/), so a first load fetches them at once
// instead of one import level at a time; every preload and every
// relative import names a file the bundle has.
func TestDashboardModulesPreloadedAndResolved(t *testing.T) {
	index, err := fs.ReadFile(assets.Web, "web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	preloads := map[string]bool{}
	for _, m := range regexp.MustCompile(`<link rel="modulepreload" href="/ui/([^"]+)">`).FindAllStringSubmatch(string(index), -1) {
		preloads[m[1]] = true
		if _, err := fs.Stat(assets.Web, "web/"+m[1]); err != nil {
			t.Errorf("index.html preloads %s, which is not in the bundle", m[1])
		}
	}
	n := 0
	err = fs.WalkDir(assets.Web, "web/js", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		n++
		name := strings.TrimPrefix(p, "web/")
		if name != "js/app.js" && name != "js/login.js" && !preloads[name] {
			t.Errorf("index.html does not preload %s", name)
		}
		src, err := fs.ReadFile(assets.Web, p)
		if err != nil {
			return err
		}
		for _, m := range importRe.FindAllStringSubmatch(string(src), -1) {
			if !strings.HasPrefix(m[1], ".") {
				t.Errorf("%s imports %q: only relative imports are served", name, m[1])
				continue
			}
			if _, err := fs.Stat(assets.Web, path.Join(path.Dir(p), m[1])); err != nil {
				t.Errorf("%s imports %s, which is not in the bundle", name, m[1])
			}
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("walked %d modules: %v", n, err)
	}
}
