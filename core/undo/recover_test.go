package undo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/core/testkit/auditmem"
	"corral/core/versions"
)

type world struct {
	dir, outside, rwRoot string
	box                  *sandbox.Sandbox
}

var alice = sandbox.Caller{Client: "alice-agent", User: "alice"}

// journalWorld is a sandbox for alice and bob keeping versions, with a
// folder outside the fence and a readwrite root.
func journalWorld(t *testing.T) (*world, *auditmem.Journal) {
	t.Helper()
	sink := &auditmem.Journal{}
	w := &world{dir: t.TempDir()}
	w.outside, w.rwRoot = filepath.Join(w.dir, "outside"), filepath.Join(w.dir, "rw")
	private := filepath.Join(w.dir, "corral-data")
	for _, d := range []string{w.outside, w.rwRoot, private} {
		os.MkdirAll(d, 0o755)
	}
	layout := paths.Layout{Base: filepath.Join(w.dir, "base"), SharedDir: "share", OutputDir: "output", Home: w.dir,
		Roots: []paths.Root{{Path: w.rwRoot, Access: paths.ReadWrite}}}
	box, err := sandbox.Open(sandbox.Config{Layout: layout, Users: []string{"alice", "bob"}, Audit: sink, Private: []string{private},
		Versions: versions.Config{Dir: filepath.Join(private, "versions")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	w.box = box
	return w, sink
}

// Recover rolls back what unfinished events changed, leaves a path
// changed again since, completes every event as interrupted and sweeps
// Corral's temporary files.
func TestRecoverRollsBack(t *testing.T) {
	t.Parallel()
	w, sink := journalWorld(t)
	ctx := context.Background()
	scope := filepath.Join(w.dir, "base", "alice")
	for _, f := range []string{"a.txt", "b.txt", "gone.txt"} {
		if _, err := w.box.Write(ctx, alice, sandbox.WriteArgs{Path: f, Content: "old " + f + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	// What a crash leaves: a write that landed, a write whose file was
	// changed again by a later call, a delete that landed, a created
	// file that did not, a folder made, and a command that was running.
	vs := w.box.Versions()
	keep := func(s string) string {
		id, err := vs.PutBytes("alice-agent", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	pending := audit.Event{Client: "alice-agent", User: "alice", Op: "file.apply_patch", Decision: audit.Allow, Detail: "codex patch; " + audit.Pending,
		Changes: []audit.Change{
			{Path: "a.txt", Kind: audit.Modified, Version: keep("old a.txt\n"), After: versions.Sum([]byte("new a\n")), Mode: 0o644},
			{Path: "b.txt", Kind: audit.Modified, Version: keep("old b.txt\n"), After: versions.Sum([]byte("new b\n")), Mode: 0o644},
			{Path: "gone.txt", Kind: audit.Deleted, Version: keep("old gone.txt\n"), Mode: 0o600},
			{Path: "never.txt", Kind: audit.Created, After: versions.Sum([]byte("never\n")), Mode: 0o644},
			{Path: "made", Kind: audit.Created, Dir: true, Mode: 0o755},
			{Path: filepath.Join(w.outside, "approved.txt"), Kind: audit.Created, After: versions.Sum([]byte("x\n")), Mode: 0o644},
		}}
	sink.Record(ctx, pending)
	sink.Record(ctx, audit.Event{Client: "alice-agent", User: "alice", Op: "command.run", Target: "make", Decision: audit.Allow, Detail: audit.Running})
	os.WriteFile(filepath.Join(scope, "a.txt"), []byte("new a\n"), 0o644)
	os.WriteFile(filepath.Join(scope, "b.txt"), []byte("someone else's\n"), 0o644)
	os.Remove(filepath.Join(scope, "gone.txt"))
	os.Mkdir(filepath.Join(scope, "made"), 0o755)
	os.WriteFile(filepath.Join(scope, ".corral-tmp-0123456789abcdef"), []byte("staged"), 0o600)
	os.WriteFile(filepath.Join(w.outside, ".corral-tmp-4567456745674567"), []byte("staged"), 0o600)
	os.MkdirAll(filepath.Join(w.rwRoot, "deep", "er"), 0o755)
	os.WriteFile(filepath.Join(w.rwRoot, "deep", "er", ".corral-tmp-cmd-1-2"), []byte("copy"), 0o600)

	r, err := w.box.Recover(ctx, New(w.box, nil).RollBack)
	if err != nil {
		t.Fatal(err)
	}
	if r.Events != 2 || r.Commands != 1 || r.RolledBack != 3 || r.Left != 1 || r.TempFiles != 3 {
		t.Errorf("recovery: %+v", r)
	}
	for f, want := range map[string]string{"a.txt": "old a.txt\n", "b.txt": "someone else's\n", "gone.txt": "old gone.txt\n"} {
		if b, err := os.ReadFile(filepath.Join(scope, f)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", f, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(scope, "gone.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("gone.txt back as %v (%v)", fi, err)
	}
	for _, p := range []string{filepath.Join(scope, "made"), filepath.Join(scope, "never.txt"), filepath.Join(scope, ".corral-tmp-0123456789abcdef"), filepath.Join(w.outside, ".corral-tmp-4567456745674567"), filepath.Join(w.rwRoot, "deep", "er", ".corral-tmp-cmd-1-2")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	left, _ := sink.Unfinished(ctx, 100)
	if len(left) != 0 {
		t.Errorf("unfinished after Recover: %+v", left)
	}
	evs := sink.Events()
	patchEv, cmdEv := evs[len(evs)-2], evs[len(evs)-1]
	if patchEv.Decision != audit.Error || patchEv.Detail != "codex patch; interrupted; 3 changes put back" ||
		len(patchEv.Changes) != 1 || patchEv.Changes[0].Path != "b.txt" || !strings.Contains(patchEv.Error, "1 of its changes could not be put back") {
		t.Errorf("the patch's event: %+v", patchEv)
	}
	if cmdEv.Decision != audit.Error || cmdEv.Detail != "interrupted" || !strings.Contains(cmdEv.Error, "before the command ended") {
		t.Errorf("the command's event: %+v", cmdEv)
	}
	if got := w.box.Recovered(); got == nil || *got != r {
		t.Errorf("Recovered: %+v", got)
	}
}
