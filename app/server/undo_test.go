package server

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/client"
	"corral/app/wire"
)

// tree reads every regular file and symlink below dir (host side) into
// a map of slash path → content ("-> target" for links).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[filepath.ToSlash(rel)] = "-> " + l
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if g != v {
			t.Errorf("%s: %s holds %d bytes %.40q, want %d bytes %.40q", what, k, len(g), g, len(v), v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s should not be there", what, k)
		}
	}
}

// lastEvent is the newest event of op.
func lastEvent(t *testing.T, c *client.Client, op string) wire.Event {
	t.Helper()
	p := rpcCall[wire.Page](t, c, "audit.query", m("op", op, "limit", 1))
	if len(p.Events) == 0 {
		t.Fatalf("no %s event", op)
	}
	return p.Events[0]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// The owner undoes file.write (replace, create, append), file.edit,
// file.delete -r and file.move through the real server: every file comes
// back byte for byte, created files go away, and the undo is itself an
// event that can be undone.
func TestUndoFileOperations(t *testing.T) {
	t.Parallel()
	_, alice, own, scope := startAlice(t)
	bin := randomBytes(3000)
	rpcCall[any](t, alice, "file.write", m("path", "docs/report.md", "content", "# Report\nfirst draft\n"))
	rpcCall[any](t, alice, "file.write", m("path", "docs/data.bin", "content", base64.StdEncoding.EncodeToString(bin), "encoding", "base64"))
	for i := range 5 {
		rpcCall[any](t, alice, "file.write", m("path", fmt.Sprintf("docs/sub/n%d.txt", i), "content", strings.Repeat("line\n", i+1)))
	}
	rpcCall[any](t, alice, "command.run", m("command", "true")) // makes playground/ and the share link
	orig := tree(t, scope)

	undo := func(op string) wire.UndoResult {
		t.Helper()
		ev := lastEvent(t, own, op)
		if len(ev.Changes) == 0 {
			t.Fatalf("%s event %d recorded no changes", op, ev.ID)
		}
		pre := rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", ev.ID))
		if pre.Conflicts != 0 || pre.Applied {
			t.Fatalf("preview of %s: %+v", op, pre)
		}
		r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID))
		if !r.Applied || r.UndoEvent == 0 {
			t.Fatalf("undo of %s: %+v", op, r)
		}
		return r
	}

	// file.write replacing: the preview shows the diff back.
	rpcCall[any](t, alice, "file.write", m("path", "docs/report.md", "content", "# Report\nrewritten by the agent\n"))
	ev := lastEvent(t, own, "file.write")
	pre := rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", ev.ID))
	if len(pre.Files) != 1 || !strings.Contains(pre.Files[0].Diff, "-rewritten by the agent\n+first draft\n") {
		t.Fatalf("preview of a write: %+v", pre)
	}
	undo("file.write")
	sameTree(t, "after undoing a write", tree(t, scope), orig)

	// The undo is undoable: the agent's content comes back.
	redo := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", lastEvent(t, own, "undo.apply").ID))
	if !redo.Applied {
		t.Fatalf("redo: %+v", redo)
	}
	if b, _ := os.ReadFile(filepath.Join(scope, "docs/report.md")); string(b) != "# Report\nrewritten by the agent\n" {
		t.Fatalf("after undoing the undo: %q", b)
	}
	undo("undo.apply")
	sameTree(t, "after undoing the redo", tree(t, scope), orig)

	// A created file is removed; an append is taken back; a binary file
	// overwritten comes back byte for byte.
	rpcCall[any](t, alice, "file.write", m("path", "docs/new/made.txt", "content", "new"))
	undo("file.write")
	rpcCall[any](t, alice, "file.write", m("path", "docs/sub/n0.txt", "content", "more\n", "append", true))
	undo("file.write")
	rpcCall[any](t, alice, "file.write", m("path", "docs/data.bin", "content", "text now"))
	undo("file.write")
	rpcCall[any](t, alice, "file.edit", m("path", "docs/report.md", "edits", []any{
		m("old_text", "first", "new_text", "second"), m("old_text", "# Report", "new_text", "# Final report")}))
	undo("file.edit")
	got := tree(t, scope)
	delete(got, "docs/new") // an emptied folder may stay
	sameTree(t, "after undoing writes and an edit", got, orig)

	rpcCall[any](t, alice, "file.delete", m("path", "docs", "recursive", true))
	if _, err := os.Stat(filepath.Join(scope, "docs")); err == nil {
		t.Fatal("docs not deleted")
	}
	r := undo("file.delete")
	if len(r.Files) != 7 {
		t.Errorf("undo of a recursive delete restored %d files, want 7: %+v", len(r.Files), r.Files)
	}
	sameTree(t, "after undoing delete -r", tree(t, scope), orig)

	rpcCall[any](t, alice, "file.move", m("from", "docs", "to", "archive/docs"))
	undo("file.move")
	sameTree(t, "after undoing a folder move", tree(t, scope), orig)
	if ents, _ := os.ReadDir(filepath.Join(scope, "archive", "docs")); len(ents) != 0 {
		t.Errorf("the moved folder still holds %v", ents)
	}
	rpcCall[any](t, alice, "file.move", m("from", "docs/report.md", "to", "report-final.md"))
	undo("file.move")
	sameTree(t, "after undoing a file move", tree(t, scope), orig)

	// versions.list names every event that changed the path.
	hist := rpcCall[wire.HistoryResult](t, own, "versions.list", m("path", "docs/report.md", "context", m("user_id", "alice")))
	if len(hist.Versions) < 6 {
		t.Errorf("versions of docs/report.md: %+v", hist.Versions)
	}
	for _, v := range hist.Versions {
		if v.Version != "" && !v.Kept {
			t.Errorf("version %+v not kept", v)
		}
	}
}

// A file changed again after the event is a conflict: named, and nothing
// is overwritten; skip_conflicts undoes the rest.
func TestUndoConflict(t *testing.T) {
	t.Parallel()
	_, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "file.write", m("path", "a.txt", "content", "a1"))
	rpcCall[any](t, alice, "file.write", m("path", "b.txt", "content", "b1"))
	rpcCall[any](t, alice, "file.apply_patch", m("patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a1\n\\ No newline at end of file\n+a2\n\\ No newline at end of file\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b1\n\\ No newline at end of file\n+b2\n\\ No newline at end of file\n"))
	patchEv := lastEvent(t, own, "file.apply_patch")
	if len(patchEv.Changes) != 2 {
		t.Fatalf("patch changes: %+v", patchEv.Changes)
	}
	rpcCall[any](t, alice, "file.write", m("path", "a.txt", "content", "a3 by someone later"))

	pre := rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", patchEv.ID))
	if pre.Conflicts != 1 {
		t.Fatalf("preview: %+v", pre)
	}
	for _, f := range pre.Files {
		if (f.Path == "a.txt") != (f.Conflict != "") {
			t.Errorf("conflict on %s: %q", f.Path, f.Conflict)
		}
	}
	ce := callErr(t, own, "undo.apply", m("event_id", patchEv.ID))
	if ce.Data.Kind != "conflict" || !strings.Contains(ce.Message, "changed again") {
		t.Fatalf("undo over a conflict: %+v", ce)
	}
	sameTree(t, "after a refused undo", tree(t, scope), map[string]string{"a.txt": "a3 by someone later", "b.txt": "b2"})
	r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", patchEv.ID, "skip_conflicts", true))
	if !r.Applied || r.Conflicts != 1 {
		t.Fatalf("undo skipping conflicts: %+v", r)
	}
	sameTree(t, "after undoing around a conflict", tree(t, scope), map[string]string{"a.txt": "a3 by someone later", "b.txt": "b1"})

	// Agents can call none of it.
	for _, meth := range []string{"undo.apply", "undo.preview", "versions.list", "changes.get", "version.restore", "undo.client", "versions.usage"} {
		if ce := callErr(t, alice, meth, m("event_id", patchEv.ID, "path", "a.txt")); ce.Data.Kind != "forbidden" {
			t.Errorf("agent calling %s: %+v", meth, ce)
		}
	}
}

// Agents can neither see nor reach the version store: no path, symlink
// or command of theirs names it, and the owner is never even asked.
func TestVersionStoreOutOfReach(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, own := h.dial(aliceKey), h.dial(ownerToken)
	secret := "only-in-a-kept-version-" + fmt.Sprint(randomBytes(4))
	rpcCall[any](t, alice, "file.write", m("path", "s.txt", "content", secret))
	rpcCall[any](t, alice, "file.write", m("path", "s.txt", "content", "replaced"))
	vdir := h.files.VersionsDir()
	blobs, _ := filepath.Glob(filepath.Join(vdir, "blobs", "*", "*"))
	if len(blobs) == 0 {
		t.Fatal("no version kept")
	}
	blob := blobs[0]
	rel, _ := filepath.Rel(filepath.Join(h.base, "alice"), blob)
	rpcCall[any](t, alice, "command.run", m("command", "ln -s "+vdir+" abs-link; ln -s ../../versions rel-link; ln -s "+rel+" rel-blob"))

	for _, p := range []string{vdir, blob, filepath.Join(vdir, "blobs"), "../versions", "../../versions/blobs", rel,
		"abs-link", "abs-link/blobs", "rel-link", "rel-link/blobs", "rel-blob", "share/../../versions"} {
		for _, meth := range []string{"file.read", "folder.list", "file.stat", "file.delete", "file.write", "file.find"} {
			params := m("path", p, "content", "x", "pattern", "**")
			raw, err := alice.Call(t.Context(), meth, params)
			if err == nil {
				if meth == "file.stat" && (strings.HasSuffix(p, "-link") || p == "rel-blob") {
					continue // the link itself, not what it names
				}
				if meth == "file.delete" && (strings.HasSuffix(p, "-link") || p == "rel-blob") {
					continue // removes the agent's own link
				}
				t.Errorf("%s %s succeeded: %.200s", meth, p, raw)
			}
			if bytes := string(raw); strings.Contains(bytes, secret) {
				t.Errorf("%s %s leaked the kept content", meth, p)
			}
		}
	}
	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "cat "+blob+"; ls -la "+vdir+" "+filepath.Dir(vdir)+"; cat rel-blob rel-link/blobs/*/* abs-link/blobs/*/*; find / -name blobs 2>/dev/null"))
	if strings.Contains(r.Stdout+r.Stderr, secret) || strings.Contains(r.Stdout, "blobs\n") {
		t.Errorf("a command reached the version store: %+v", r)
	}
	// The owner was never asked about any of it.
	if p := rpcCall[map[string][]any](t, own, "approval.list", nil); len(p["pending"]) != 0 {
		t.Errorf("questions asked: %v", p)
	}
	if b, err := os.ReadFile(blob); err != nil || string(b) != secret {
		t.Errorf("the version itself: %q %v", b, err)
	}
}

// version.restore puts back a version of the path it names only: a kept
// version (an agent's, whose id the owner's versions.list shows) written
// over a host file outside every fence was restored (the red team wrote
// an agent's text over /etc/passwd of a running daemon this way), and
// over another file of the scope too, though file.write of the same path
// is refused or asked about.
func TestVersionRestoreOnlyItsOwnPath(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, own := h.dial(aliceKey), h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "s.txt", "content", "agent text"))
	rpcCall[any](t, alice, "file.write", m("path", "s.txt", "content", "replaced"))
	rpcCall[any](t, alice, "file.write", m("path", "other.txt", "content", "other"))
	ctxAlice := m("user_id", "alice")
	hist := rpcCall[wire.HistoryResult](t, own, "versions.list", m("path", "s.txt", "context", ctxAlice))
	id := ""
	for _, v := range hist.Versions {
		if v.Version != "" {
			id = v.Version
		}
	}
	if id == "" {
		t.Fatalf("no kept version of s.txt: %+v", hist)
	}
	host := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(host, []byte("root:x:0:0\n"), 0o644)
	for _, p := range []string{host, "other.txt"} {
		if ce := callErr(t, own, "version.restore", m("path", p, "version", id, "context", ctxAlice)); ce.Data.Kind != "invalid_params" {
			t.Errorf("restoring s.txt's version over %s: %+v", p, ce)
		}
	}
	if b, _ := os.ReadFile(host); string(b) != "root:x:0:0\n" {
		t.Errorf("the host file now holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.base, "alice", "other.txt")); string(b) != "other" {
		t.Errorf("other.txt now holds %q", b)
	}
	// Its own path still gets it back.
	rpcCall[any](t, own, "version.restore", m("path", "s.txt", "version", id, "context", ctxAlice))
	if b, _ := os.ReadFile(filepath.Join(h.base, "alice", "s.txt")); string(b) != "agent text" {
		t.Errorf("s.txt after restoring its version: %q", b)
	}
}
