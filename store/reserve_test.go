package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/testkit/poll"
	"corral/store/storetest"
)

// fill writes a file until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestFullDiskLosesNothing: with the disk full, what is being recorded is
// still recorded (the reserve is given up), the store then says it cannot
// write, and once there is room it takes its reserve back and records
// again. Nothing recorded before is lost.
func TestFullDiskLosesNothing(t *testing.T) {
	dir := storetest.SmallDisk(t, "12m")
	s, err := Open(filepath.Join(dir, "corral.db"), Options{Reserve: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	detail := strings.Repeat("x", 32<<10)
	var ids []int64
	record := func() error {
		id, err := s.Record(ctx, audit.Event{Client: "a", Op: "file.write", Target: "t", Decision: audit.Allow, Detail: detail})
		if err == nil {
			ids = append(ids, id)
		}
		return err
	}
	for range 10 {
		if err := record(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Writable(); err != nil {
		t.Fatalf("writable before: %v", err)
	}
	fill(t, filepath.Join(dir, "filler"))
	// Records keep succeeding on the reserve; the store notices it is full.
	for i := 0; s.Writable() == nil; i++ {
		if i > 200 {
			t.Fatal("the store never noticed the full disk")
		}
		if err := record(); err != nil {
			t.Fatalf("event %d lost on a full disk: %v", i, err)
		}
	}
	if err := s.Writable(); !strings.Contains(err.Error(), "is full") {
		t.Errorf("Writable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "corral.db.reserve")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reserve was not given up: %v", err)
	}
	os.Remove(filepath.Join(dir, "filler"))
	poll.EventuallyNil(t, 10*time.Second, s.Writable, "the store to resume once there was room")
	if _, err := os.Stat(filepath.Join(dir, "corral.db.reserve")); err != nil {
		t.Errorf("the reserve was not taken back: %v", err)
	}
	if err := record(); err != nil {
		t.Fatal(err)
	}
	page, err := s.Query(ctx, audit.Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != len(ids) {
		t.Errorf("%d events stored, %d recorded", len(page.Events), len(ids))
	}
}

// TestComplete: an event recorded before its operation ends is completed
// in place, keeping its id and time; subscribers see it twice.
func TestComplete(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "corral.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	events, cancel := s.Subscribe()
	defer cancel()
	at := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	id, err := s.Record(ctx, audit.Event{Time: at, Client: "a", Op: "command.run", Target: "sleep 9", Decision: audit.Allow, DecidedBy: audit.ByScope, Detail: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, audit.Event{ID: id, Time: at, Client: "a", Op: "command.run", Target: "sleep 9", Decision: audit.Allow, DecidedBy: audit.ByScope, Detail: "exit 0", Bytes: 5, DurationMs: 9000}); err != nil {
		t.Fatal(err)
	}
	page, err := s.Query(ctx, audit.Filter{ID: id})
	if err != nil || len(page.Events) != 1 {
		t.Fatal(page, err)
	}
	if e := page.Events[0]; e.Detail != "exit 0" || e.DurationMs != 9000 || e.Bytes != 5 || !e.Time.Equal(at) {
		t.Errorf("completed: %+v", e)
	}
	for _, want := range []string{"running", "exit 0"} {
		select {
		case e := <-events:
			if e.ID != id || e.Detail != want {
				t.Errorf("subscriber got %+v, want %q", e, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %q event for subscribers", want)
		}
	}
	if err := s.Complete(ctx, audit.Event{Op: "x"}); err == nil {
		t.Error("Complete without an id")
	}
}
