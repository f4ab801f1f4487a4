package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/audit"
	"corral/core/testkit/poll"
)

// A command that rewrites 50 files, deletes 10 (and a folder), creates 5
// and changes a file in the shared folder is recorded on its event; the
// owner's undo of that event restores every file byte for byte and
// removes the created ones.
func TestUndoCommand(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, own := h.dial(aliceKey), h.dial(ownerToken)
	scope, share := filepath.Join(h.base, "alice"), filepath.Join(h.base, "share")
	info := rpcCall[map[string]any](t, alice, "session.info", nil)
	if v := info["exec"].(map[string]any)["versions"].(string); !strings.Contains(v, "So are files a command") {
		t.Fatalf("session.info.exec.versions: %q", v)
	}
	rpcCall[any](t, alice, "command.run", m("command", "true")) // playground/, the share link
	for i := range 60 {
		body := fmt.Sprintf("file %d\n%s", i, randomBytes(100+i*37))
		if err := os.WriteFile(filepath.Join(scope, "work", fmt.Sprintf("f%02d", i)), []byte(body), 0o644); err != nil {
			if err := os.MkdirAll(filepath.Join(scope, "work"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(scope, "work", fmt.Sprintf("f%02d", i)), []byte(body), 0o644)
		}
	}
	os.MkdirAll(filepath.Join(scope, "old/deep"), 0o755)
	os.WriteFile(filepath.Join(scope, "old/deep/x.txt"), []byte("deep\n"), 0o600)
	os.WriteFile(filepath.Join(share, "common.txt"), []byte("shared\n"), 0o644)
	orig, origShare := tree(t, scope), tree(t, share)

	cmd := `set -e
for i in $(seq -w 0 49); do printf 'rewritten %s\n' $i > work/f$i; done
for i in $(seq 50 59); do rm work/f$i; done
rm -r old
for i in 1 2 3 4 5; do echo new > work/new$i; done
echo more >> /share/common.txt
ls work | wc -l`
	res := rpcCall[wire.RunResult](t, alice, "command.run", m("command", cmd))
	if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "55" {
		t.Fatalf("command: %+v", res)
	}
	kinds := map[audit.ChangeKind]int{}
	for _, c := range res.Changes {
		kinds[c.Kind]++
	}
	if kinds[audit.Modified] != 51 || kinds[audit.Deleted] != 11 || kinds[audit.Created] != 5 {
		t.Fatalf("command.run's changes: %v %+v", kinds, res.Changes)
	}
	if b, _ := os.ReadFile(filepath.Join(scope, "work/f07")); string(b) != "rewritten 07\n" {
		t.Fatalf("the command's change is not in the real folder: %q", b)
	}
	if _, err := os.Stat(filepath.Join(scope, "old")); !os.IsNotExist(err) {
		t.Fatalf("old/ still there: %v", err)
	}
	ev := lastEvent(t, own, "command.run")
	if len(ev.Changes) != 67 {
		t.Fatalf("event %d has %d changes", ev.ID, len(ev.Changes))
	}
	r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID))
	if !r.Applied || r.Conflicts != 0 {
		t.Fatalf("undo: %+v", r)
	}
	got := tree(t, scope)
	sameTree(t, "after undoing the command", got, orig)
	sameTree(t, "the shared folder after the undo", tree(t, share), origShare)
	if fi, err := os.Stat(filepath.Join(scope, "old/deep/x.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("old/deep/x.txt back with %v, %v", fi, err)
	}
	// Nothing is left in the version store's run folder.
	if ents, _ := os.ReadDir(filepath.Join(h.files.VersionsDir(), "run")); len(ents) != 0 {
		t.Errorf("layers left behind: %v", ents)
	}
}

// A file changed after the command is a conflict: named, not overwritten.
func TestUndoCommandConflict(t *testing.T) {
	t.Parallel()
	_, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "file.write", m("path", "a.txt", "content", "a1\n"))
	rpcCall[any](t, alice, "file.write", m("path", "b.txt", "content", "b1\n"))
	rpcCall[any](t, alice, "command.run", m("command", "echo a2 > a.txt; echo b2 > b.txt"))
	ev := lastEvent(t, own, "command.run")
	rpcCall[any](t, alice, "file.write", m("path", "a.txt", "content", "a3 later\n"))
	pre := rpcCall[wire.UndoResult](t, own, "undo.preview", m("event_id", ev.ID))
	if pre.Conflicts != 1 {
		t.Fatalf("preview: %+v", pre)
	}
	for _, f := range pre.Files {
		if (f.Path == "a.txt") != (f.Conflict != "") {
			t.Errorf("conflict on %s: %q", f.Path, f.Conflict)
		}
		if f.Path == "b.txt" && !strings.Contains(f.Diff, "-b2\n+b1\n") {
			t.Errorf("diff of b.txt: %q", f.Diff)
		}
	}
	if ce := callErr(t, own, "undo.apply", m("event_id", ev.ID)); ce.Data.Kind != "conflict" {
		t.Fatalf("undo over a conflict: %+v", ce)
	}
	got := tree(t, scope)
	if got["a.txt"] != "a3 later\n" || got["b.txt"] != "b2\n" {
		t.Fatalf("after a refused undo: %q %q", got["a.txt"], got["b.txt"])
	}
}

// Concurrent commands writing the same file lose no write: each works
// on its own overlay, the later to end wins, and the earlier one's content
// is a version on the later one's event.
func TestConcurrentCommandsSameFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate") // a read-only root: the test's signal to the commands
	if err := os.Mkdir(gate, 0o755); err != nil {
		t.Fatal(err)
	}
	h := startIn(t, dir, fmt.Sprintf("[[sandbox.roots]]\npath = %q\naccess = \"read\"\n", gate))
	alice, own := h.dial(aliceKey), h.dial(ownerToken)
	scope := filepath.Join(h.base, "alice")
	rpcCall[any](t, alice, "file.write", m("path", "log.txt", "content", "start\n"))
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			c := h.dial(aliceKey)
			cmd := fmt.Sprintf(`echo cmd%d >> log.txt; while [ ! -e %s/go%d ]; do sleep 0.01; done`, i, gate, i)
			if r := rpcCall[wire.RunResult](t, c, "command.run", m("command", cmd, "timeout_ms", 60000)); r.ExitCode != 0 {
				t.Errorf("command %d: %+v", i, r)
			}
		})
	}
	// Both have appended (each in its own upper layer) before either ends.
	run := filepath.Join(h.files.VersionsDir(), "run")
	waitFor(t, "both commands to write", func() bool {
		n, _ := filepath.Glob(filepath.Join(run, "*", "0", "u", "log.txt"))
		return len(n) == 2
	})
	if b, _ := os.ReadFile(filepath.Join(scope, "log.txt")); string(b) != "start\n" {
		t.Fatalf("the real file changed while the commands ran: %q", b)
	}
	os.WriteFile(filepath.Join(gate, "go0"), nil, 0o644)
	waitFor(t, "the first command to end", func() bool {
		b, _ := os.ReadFile(filepath.Join(scope, "log.txt"))
		return string(b) == "start\ncmd0\n"
	})
	os.WriteFile(filepath.Join(gate, "go1"), nil, 0o644)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(scope, "log.txt")); string(b) != "start\ncmd1\n" {
		t.Fatalf("log.txt = %q; want the later command's", b)
	}
	// The earlier command's content is kept on the later one's event, and
	// undoing that event puts it back.
	p := rpcCall[wire.Page](t, own, "audit.query", m("op", "command.run", "limit", 2))
	var ev wire.Event
	for _, e := range p.Events {
		if len(e.Changes) == 1 && e.Changes[0].After == sha("start\ncmd1\n") {
			ev = e
		}
	}
	if ev.ID == 0 || ev.Changes[0].Version != sha("start\ncmd0\n") {
		t.Fatalf("the later command's changes: %+v", p.Events)
	}
	if r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID)); !r.Applied {
		t.Fatalf("undo: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(scope, "log.txt")); string(b) != "start\ncmd0\n" {
		t.Fatalf("after undoing the later command: %q", b)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// waitFor polls cond until it holds, for at most 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, cond, "%s", what)
}
