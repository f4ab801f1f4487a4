package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/testkit/poll"
	"corral/store/storetest"
)

// TestAuditLogUnwritable is issue 31's sixth case: with the audit log's
// -wal (then its -shm too) made immutable, a write, an overwrite and a
// delete each used to change the file and only then fail to record it,
// and the -shm killed the daemon with SIGBUS. Now every agent operation
// is refused before it touches anything, the owner is told in
// session.info, the daemon stays up, and Corral resumes by itself once
// the files are writable again.
func TestAuditLogUnwritable(t *testing.T) {
	t.Parallel()
	dir := storetest.DiskDir(t, "corral-auditfault-")
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	owner := h.dial(ownerToken)
	home := filepath.Join(h.base, "alice")
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "old"))
	rpcCall[any](t, alice, "file.write", m("path", "gone.txt", "content", "still here"))

	wal, shm := h.files.DB+"-wal", h.files.DB+"-shm"
	if err := storetest.Chattr("+i", wal); err != nil {
		t.Skipf("this file system (under /var/tmp) refuses the immutable flag, which the test needs: %v", err)
	}
	// Before the harness stops (cleanups run last first): Close must be
	// able to write.
	t.Cleanup(func() { storetest.Chattr("-i", wal, shm) })

	refused := func(when string) {
		t.Helper()
		for _, c := range []struct {
			method string
			params map[string]any
		}{
			{"file.write", m("path", "new.txt", "content", "new")},
			{"file.write", m("path", "keep.txt", "content", "overwritten")},
			{"file.delete", m("path", "gone.txt")},
			{"command.run", m("command", "touch ran")},
		} {
			ce := callErr(t, alice, c.method, c.params)
			if ce.Data.Kind != "unavailable" || !strings.Contains(ce.Message, "audit log") {
				t.Errorf("%s: %s %v: %+v", when, c.method, c.params, ce)
			}
		}
		if _, err := os.Stat(filepath.Join(home, "new.txt")); err == nil {
			t.Errorf("%s: a refused write created its file", when)
		}
		if b, _ := os.ReadFile(filepath.Join(home, "keep.txt")); string(b) != "old" {
			t.Errorf("%s: a refused overwrite changed the file: %q", when, b)
		}
		if _, err := os.Stat(filepath.Join(home, "gone.txt")); err != nil {
			t.Errorf("%s: a refused delete removed the file: %v", when, err)
		}
		if _, err := os.Stat(filepath.Join(home, "ran")); err == nil {
			t.Errorf("%s: a refused command ran", when)
		}
		info := rpcCall[map[string]any](t, owner, "session.info", nil)
		if p, _ := info["audit_problem"].(string); !strings.Contains(p, "audit log") {
			t.Errorf("%s: the owner is not told: audit_problem %q", when, p)
		}
	}
	resumes := func(when string) {
		t.Helper()
		poll.EventuallyNil(t, time.Minute, func() error {
			_, err := alice.Call(t.Context(), "file.write", m("path", "after.txt", "content", when))
			return err
		}, "%s: Corral to resume once the files were writable", when)
		if p, _ := rpcCall[map[string]any](t, owner, "session.info", nil)["audit_problem"].(string); p != "" {
			t.Errorf("%s: still a problem: %q", when, p)
		}
	}

	refused("-wal immutable")
	if err := storetest.Chattr("-i", wal); err != nil {
		t.Fatal(err)
	}
	resumes("-wal writable again")

	if err := storetest.Chattr("+i", wal, shm); err != nil {
		t.Fatal(err)
	}
	refused("-wal and -shm immutable")
	// The owner's own reads and writes must not kill the daemon either.
	owner.Call(t.Context(), "audit.query", m("client", "alice-agent"))
	owner.Call(t.Context(), "audit.stats", m("bucket", "hour"))
	if err := storetest.Chattr("-i", wal, shm); err != nil {
		t.Fatal(err)
	}
	resumes("-shm writable again")

	// Every answered success has its event; nothing refused has one.
	evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("client", "alice-agent"))
	var writes, others int
	for _, e := range evs.Events {
		if e.Op == "file.write" && e.Error == "" {
			writes++
		} else {
			others++
		}
	}
	if writes != 4 || others != 0 {
		t.Errorf("%d writes and %d other events, want 4 and 0: %+v", writes, others, evs.Events)
	}
}

// TestVersionStoreUnwritable: when the version store cannot be written
// (made immutable), a change whose old content could not be kept must
// not happen: every agent operation is refused before it touches
// anything, the owner is told, and Corral resumes by itself. A removed
// store is made again at the next operation, which then keeps its
// version there.
func TestVersionStoreUnwritable(t *testing.T) {
	t.Parallel()
	dir := storetest.DiskDir(t, "corral-versionsfault-")
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	owner := h.dial(ownerToken)
	home := filepath.Join(h.base, "alice")
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "old"))

	blobs := filepath.Join(h.files.VersionsDir(), "blobs")
	if err := storetest.Chattr("+i", blobs); err != nil {
		t.Skipf("this file system (under /var/tmp) refuses the immutable flag, which the test needs: %v", err)
	}
	t.Cleanup(func() { storetest.Chattr("-i", blobs) })
	ce := callErr(t, alice, "file.write", m("path", "keep.txt", "content", "overwritten"))
	if ce.Data.Kind != "unavailable" || !strings.Contains(ce.Message, "version store") {
		t.Errorf("an overwrite with the version store immutable: %+v", ce)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "keep.txt")); string(b) != "old" {
		t.Errorf("the refused overwrite changed the file: %q", b)
	}
	if p, _ := rpcCall[map[string]any](t, owner, "session.info", nil)["audit_problem"].(string); !strings.Contains(p, "version store") {
		t.Errorf("the owner is not told: audit_problem %q", p)
	}
	if err := storetest.Chattr("-i", blobs); err != nil {
		t.Fatal(err)
	}
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "second"))

	// Removed: made again, and the next change's old content kept there.
	if err := os.RemoveAll(h.files.VersionsDir()); err != nil {
		t.Fatal(err)
	}
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "third"))
	if ents, _ := os.ReadDir(blobs); len(ents) == 0 {
		t.Errorf("the version of %q was not kept in the store made again", "second")
	}
	if p, _ := rpcCall[map[string]any](t, owner, "session.info", nil)["audit_problem"].(string); p != "" {
		t.Errorf("still a problem: %q", p)
	}
}
