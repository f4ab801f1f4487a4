package server

import (
	"os"
	"path/filepath"
	"testing"

	"corral/app/wire"
)

// A command that deletes two folders: undo.preview names both (the
// topmost missing folder, with its files), undo.apply with folder puts
// back only that one, and a folder the event did not touch is
// invalid_params.
func TestUndoFolder(t *testing.T) {
	t.Parallel()
	_, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "command.run", m("command", "true"))
	for _, f := range []string{"a/x.txt", "a/deep/y.txt", "b/z.txt", "keep/k.txt"} {
		os.MkdirAll(filepath.Join(scope, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(scope, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rpcCall[any](t, alice, "command.run", m("command", "rm -r a b keep/k.txt"))
	ev := lastEvent(t, own, "command.run")
	pre := rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", ev.ID))
	folders := map[string]int{}
	for _, f := range pre.Folders {
		folders[f.Path] = f.Files
	}
	if pre.Target != "rm -r a b keep/k.txt" || len(folders) != 2 || folders["a"] != 2 || folders["b"] != 1 {
		t.Fatalf("preview: target %q, folders %+v", pre.Target, pre.Folders)
	}
	r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID, "folder", "a"))
	if !r.Applied || len(r.Files) != 2 {
		t.Fatalf("undo of a/: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(scope, "a/deep/y.txt")); string(b) != "a/deep/y.txt\n" {
		t.Errorf("a/deep/y.txt after restoring a/: %q", b)
	}
	for _, gone := range []string{"b", "keep/k.txt"} {
		if _, err := os.Stat(filepath.Join(scope, gone)); !os.IsNotExist(err) {
			t.Errorf("%s came back with a/: %v", gone, err)
		}
	}
	pre = rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", ev.ID))
	if len(pre.Folders) != 1 || pre.Folders[0] != (wire.UndoFolder{Path: "b", Files: 1}) {
		t.Errorf("folders after restoring a/: %+v", pre.Folders)
	}
	if ce := callErr(t, own, "undo.apply", m("event_id", ev.ID, "folder", "nowhere")); ce.Data.Kind != "invalid_params" {
		t.Errorf("a folder the event did not touch: %+v", ce)
	}
}
