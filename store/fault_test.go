package store

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/policy"
	"corral/core/testkit/poll"
	"corral/store/storetest"
)

// TestUnwritableFilesFaultAndRecover: with the -wal and -shm immutable,
// Writable says so, a Record fails without SQLite writing (no SIGBUS), an
// owner's write is refused too, and once the files are writable again the
// probe clears the fault by itself and recording resumes.
func TestUnwritableFilesFaultAndRecover(t *testing.T) {
	t.Parallel()
	dir := storetest.DiskDir(t, "corral-storefault-")
	path := filepath.Join(dir, "corral.db")
	s := openAt(t, path, Options{Reserve: -1})
	record(t, s, audit.Event{Client: "a", Op: "file.write", Target: "before"})
	files := []string{path + "-wal", path + "-shm"}
	if err := storetest.Chattr("+i", files...); err != nil {
		t.Skipf("this file system (under /var/tmp) refuses the immutable flag, which the test needs: %v", err)
	}
	t.Cleanup(func() { storetest.Chattr("-i", files...) })

	if err := s.Writable(); err == nil || !strings.Contains(err.Error(), "corral.db-") || strings.Contains(err.Error(), dir) {
		t.Errorf("Writable with the files immutable: %v", err)
	}
	if _, err := s.Record(t.Context(), audit.Event{Client: "a", Op: "file.write", Target: "during"}); err == nil {
		t.Error("Record succeeded with the files immutable")
	}
	rule := policy.Rule{ID: "ru_1", Client: "a", User: "a", Access: policy.Read, Target: "/tmp", Match: policy.Exact,
		Decision: policy.EffectAllow, Created: time.Now().UTC(), CreatedBy: "owner"}
	if err := s.SaveRule(t.Context(), rule); err == nil {
		t.Error("an owner's write succeeded with the files immutable")
	}
	if _, err := s.Query(t.Context(), audit.Filter{}); err == nil {
		t.Error("a query read with the -shm immutable")
	}

	if err := storetest.Chattr("-i", files...); err != nil {
		t.Fatal(err)
	}
	poll.EventuallyNil(t, 10*time.Second, s.Writable, "the fault to clear")
	record(t, s, audit.Event{Client: "a", Op: "file.write", Target: "after"})
	var got []string
	for _, e := range all(t, s, audit.Filter{}) {
		got = append(got, e.Target)
	}
	if strings.Join(got, " ") != "after before" {
		t.Errorf("events: %v", got)
	}
}
