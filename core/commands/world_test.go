package commands

import (
	"os"
	"path/filepath"
	"testing"

	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/core/testkit/auditmem"
	"corral/core/testkit/needs"
)

// world is a sandbox over a temporary folder (alice and bob, a read-only
// and a readwrite root, Corral's own data folder) and its commands.
type world struct {
	dir, rwRoot, private string
	box                  *sandbox.Sandbox
	cmds                 *Service
	sink                 *auditmem.Log
}

// newWorld makes a world, the sandbox's Config and the commands' changed
// by set first (either may be left alone).
func newWorld(t testing.TB, set func(w *world, cfg *sandbox.Config, ec *Config)) *world {
	t.Helper()
	w := &world{dir: t.TempDir(), sink: &auditmem.Log{}}
	ro := filepath.Join(w.dir, "ro")
	w.rwRoot = filepath.Join(w.dir, "rw")
	w.private = filepath.Join(w.dir, "corral-data")
	for _, d := range []string{ro, w.rwRoot, w.private} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.txt"), []byte("content of "+filepath.Base(d)), 0o644)
	}
	layout := paths.Layout{Base: filepath.Join(w.dir, "base"), SharedDir: "share", OutputDir: "output", Home: w.dir,
		Roots: []paths.Root{{Path: ro, Access: paths.Read}, {Path: w.rwRoot, Access: paths.ReadWrite}}}
	cfg := sandbox.Config{Layout: layout, Users: []string{"alice", "bob"}, Audit: w.sink, Private: []string{w.private}}
	var ec Config
	if set != nil {
		set(w, &cfg, &ec)
	}
	box, err := sandbox.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	w.box, w.cmds = box, New(box, ec)
	return w
}

// runner is a command runner for w that works here, or the test fails
// (skipped under -short) saying what is missing.
func runner(t testing.TB, w *world) *execbox.Runner {
	t.Helper()
	needs.Tool(t, "bwrap", "bubblewrap")
	r, err := execbox.NewRunner(execbox.Options{Hidden: []string{w.private}, NetInit: execboxtest.NetInit(t)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, why := r.Available(); !ok {
		t.Fatalf("sandbox unavailable: %s", why)
	}
	return r
}

var alice = sandbox.Caller{Client: "alice-agent", User: "alice"}
