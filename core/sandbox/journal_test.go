package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/testkit/auditmem"
	"corral/core/versions"
)

func journalWorld(t *testing.T) (*world, *auditmem.Journal) {
	t.Helper()
	sink := &auditmem.Journal{}
	w := newWorldWith(t, func(w *world, cfg *Config) {
		cfg.Audit = sink
		cfg.Versions = versions.Config{Dir: filepath.Join(w.private, "versions")}
	})
	return w, sink
}

// The intent is recorded before the change: when it cannot be, nothing
// changes (before, the file was written and then the event failed).
func TestIntentBeforeChange(t *testing.T) {
	t.Parallel()
	w, sink := journalWorld(t)
	ctx := context.Background()
	if _, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "old\n"}); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(w.dir, "base", "alice", "a.txt")
	sink.Fail(errs.New(errs.IO, "", "disk full"))
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"write", func() error {
			_, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "new\n"})
			return err
		}},
		{"append", func() error {
			_, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "more\n", Append: true})
			return err
		}},
		{"delete", func() error { _, err := w.box.Delete(ctx, alice, DeleteArgs{Path: "a.txt"}); return err }},
		{"move", func() error { _, err := w.box.Move(ctx, alice, MoveArgs{From: "a.txt", To: "b.txt"}); return err }},
	} {
		if err := op.do(); err == nil {
			t.Errorf("%s answered success with the audit log failing", op.name)
		}
		if b, err := os.ReadFile(host); err != nil || string(b) != "old\n" {
			t.Errorf("after a refused %s, a.txt holds %q (%v)", op.name, b, err)
		}
	}
}

// The start-up sweep removes only Corral's own temporary files, never a
// file that merely starts with ".corral-tmp-": the red team's owner kept
// ".corral-tmp-notes.txt" in a readwrite root and every start of the
// daemon deleted it (and one in a sub-folder), with no event and no
// version kept. The same held for an agent's own file a command made.
func TestRecoverKeepsLookalikeTemps(t *testing.T) {
	t.Parallel()
	w, sink := journalWorld(t)
	ctx := context.Background()
	scope := filepath.Join(w.dir, "base", "alice")
	os.MkdirAll(scope, 0o755)
	os.MkdirAll(filepath.Join(w.rwRoot, "sub"), 0o755)
	sink.Record(ctx, audit.Event{Client: "alice-agent", User: "alice", Op: "file.write", Decision: audit.Allow, Detail: audit.Pending,
		Changes: []audit.Change{{Path: filepath.Join(w.outside, "approved.txt"), Kind: audit.Created, After: versions.Sum([]byte("x\n")), Mode: 0o644}}})
	keep := []string{
		filepath.Join(w.rwRoot, ".corral-tmp-notes.txt"),
		filepath.Join(w.rwRoot, "sub", ".corral-tmp-draft"),
		filepath.Join(w.rwRoot, ".corral-tmp-0123456789ABCDEF"),
		filepath.Join(w.rwRoot, ".corral-tmp-cmd-1-x"),
		filepath.Join(scope, ".corral-tmp-mine"),
		filepath.Join(w.outside, ".corral-tmp-owner"),
	}
	gone := []string{
		filepath.Join(w.rwRoot, "sub", ".corral-tmp-0123456789abcdef"),
		filepath.Join(w.rwRoot, ".corral-tmp-cmd-4242-7"),
		filepath.Join(scope, ".corral-tmp-fedcba9876543210"),
		filepath.Join(w.outside, ".corral-tmp-00112233445566ff"),
	}
	for _, p := range append(append([]string{}, keep...), gone...) {
		if err := os.WriteFile(p, []byte("content of "+filepath.Base(p)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := w.box.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range keep {
		if b, err := os.ReadFile(p); err != nil || string(b) != "content of "+filepath.Base(p) {
			t.Errorf("%s: not Corral's temporary file, yet the sweep removed it (%q, %v)", p, b, err)
		}
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s: Corral's temporary file is still there (%v)", p, err)
		}
	}
	if r.TempFiles != len(gone) {
		t.Errorf("recovery removed %d temporary files, want %d", r.TempFiles, len(gone))
	}
}
