package server

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/client"
	"corral/app/wire"
	"corral/core/audit"
	"corral/core/policy"
)

// folder.create makes a folder and the missing ones above it, in the
// scope and in share/; a second call is fine; a file in the way, an
// escape or another user's folder is refused. The event records each
// folder made as a created change, and undoing it removes exactly those
// (not a folder that was there before), and only while they are empty.
func TestFolderCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	scope := filepath.Join(h.base, "alice")

	rpcCall[any](t, alice, "folder.create", m("path", "pre"))
	r := rpcCall[wire.FolderResult](t, alice, "folder.create", m("path", "pre/a/b", "reason", "sort the notes"))
	if r.Path != "pre/a/b" || !r.Created {
		t.Fatalf("folder.create: %+v", r)
	}
	if fi, err := os.Stat(filepath.Join(scope, "pre/a/b")); err != nil || !fi.IsDir() {
		t.Fatalf("pre/a/b not made: %v", err)
	}
	ev := lastEvent(t, own.c, "folder.create")
	if ev.Decision != audit.Allow || ev.Target != "pre/a/b" || len(ev.Changes) != 2 ||
		ev.Changes[0] != (wire.Change{Path: "pre/a", Kind: audit.Created, Dir: true, Mode: 0o755}) || ev.Changes[1].Path != "pre/a/b" {
		t.Fatalf("event: %+v", ev)
	}
	if again := rpcCall[wire.FolderResult](t, alice, "folder.create", m("path", "pre/a/b")); again.Created {
		t.Errorf("an existing folder made again: %+v", again)
	}
	if s := rpcCall[wire.FolderResult](t, alice, "folder.create", m("path", "share/team")); s.Path != "share/team" {
		t.Errorf("share: %+v", s)
	} else if _, err := os.Stat(filepath.Join(h.base, "share", "team")); err != nil {
		t.Errorf("share/team not made: %v", err)
	}
	rpcCall[any](t, alice, "file.write", m("path", "f.txt", "content", "x"))
	for _, c := range []struct{ path, kind string }{
		{"f.txt", "exists"}, {"f.txt/sub", "not_directory"}, {"../bob/x", "denied"}, {"", "invalid_path"},
	} {
		if ce := callErr(t, alice, "folder.create", m("path", c.path)); ce.Data.Kind != c.kind {
			t.Errorf("folder.create %q: %s (%s), want %s", c.path, ce.Message, ce.Data.Kind, c.kind)
		}
	}

	// Undo removes pre/a/b and pre/a, not pre (made by an earlier event).
	rpcCall[wire.UndoResult](t, own.c, "undo.apply", m("event_id", ev.ID))
	if _, err := os.Stat(filepath.Join(scope, "pre/a")); !os.IsNotExist(err) {
		t.Errorf("pre/a is still there after the undo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(scope, "pre")); err != nil {
		t.Errorf("pre, made before, went with the undo: %v", err)
	}
	// Undoing the undo makes them again.
	rpcCall[wire.UndoResult](t, own.c, "undo.apply", m("event_id", lastEvent(t, own.c, "undo.apply").ID))
	if _, err := os.Stat(filepath.Join(scope, "pre/a/b")); err != nil {
		t.Errorf("redo did not make pre/a/b: %v", err)
	}
	// A folder that holds a file now is a conflict.
	rpcCall[any](t, alice, "folder.create", m("path", "held"))
	held := lastEvent(t, own.c, "folder.create")
	rpcCall[any](t, alice, "file.write", m("path", "held/keep.txt", "content", "keep"))
	pre := rpcCall[wire.UndoResult](t, own.c, "undo.preview", m("event_id", held.ID))
	if pre.Conflicts != 1 || !strings.Contains(pre.Files[0].Conflict, "holds files") {
		t.Errorf("undo of a folder that holds a file: %+v", pre)
	}
	if ce := callErr(t, own.c, "undo.apply", m("event_id", held.ID)); ce.Data.Kind != "conflict" {
		t.Errorf("undo.apply over a conflict: %+v", ce)
	}

	// Outside the fence the owner is asked; a denial makes nothing.
	outside := filepath.Join(dir, "outside", "new")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	done := async(alice, "folder.create", m("path", outside))
	a := own.requested()
	if a.Access != policy.Write || a.Target != outside {
		t.Fatalf("approval: %+v", a)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	if err := <-done; err == nil || err.(*client.Error).Data.Kind != "denied" {
		t.Fatalf("after deny: %v", err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the outside folder was made after a denial: %v", err)
	}
	done = async(alice, "folder.create", m("path", outside))
	a = own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	if err := <-done; err != nil {
		t.Fatalf("after allow: %v", err)
	}
	if fi, err := os.Stat(outside); err != nil || !fi.IsDir() {
		t.Errorf("the outside folder was not made after allow: %v", err)
	}
}

// file.read over /ws: a windows-1252 file comes back as UTF-8 text naming
// the encoding; encoding base64 returns any file's bytes by byte range and
// is audited as such.
func TestFileReadEncodings(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	scope := filepath.Join(h.base, "alice")
	os.MkdirAll(scope, 0o755)
	os.WriteFile(filepath.Join(scope, "old.txt"), []byte("Gr\xfc\xdfe \x96 caf\xe9\n"), 0o644)
	bin := []byte{0x7f, 'E', 'L', 'F', 0, 1, 2, 0xff}
	os.WriteFile(filepath.Join(scope, "prog"), bin, 0o755)

	txt := rpcCall[map[string]any](t, alice, "file.read", m("path", "old.txt"))
	if txt["content"] != "Grüße – café\n" || txt["encoding"] != "windows-1252" || txt["type"] != "text" {
		t.Errorf("file.read of a windows-1252 file: %v", txt)
	}
	if ce := callErr(t, alice, "file.read", m("path", "prog")); ce.Data.Kind != "binary" || !strings.Contains(ce.Message, "base64") {
		t.Errorf("file.read of a binary file: %+v", ce)
	}
	r := rpcCall[struct {
		Type, Encoding, Data string
		Bytes, Offset        int64
		Length               int
		Truncated            bool
	}](t, alice, "file.read", m("path", "prog", "encoding", "base64", "offset", 2, "limit", 4))
	if got, _ := base64.StdEncoding.DecodeString(r.Data); r.Type != "binary" || r.Encoding != "base64" || string(got) != string(bin[2:6]) || r.Bytes != 8 || r.Offset != 2 || r.Length != 4 || !r.Truncated {
		t.Errorf("file.read base64: %+v", r)
	}
	if ev := lastEvent(t, own.c, "file.read"); !strings.Contains(ev.Detail, "base64") || ev.Bytes != 4 {
		t.Errorf("event of a base64 read: %+v", ev)
	}
	if ce := callErr(t, alice, "file.read", m("path", "prog", "encoding", "utf16")); ce.Data.Kind != "invalid_params" {
		t.Errorf("encoding utf16: %+v", ce)
	}
}
