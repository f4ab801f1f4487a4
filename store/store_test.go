package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"corral/core/audit"
)

// openTest opens a fresh store in t.TempDir and closes it when t ends.
func openTest(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corral.db")
	return openAt(t, path, opts), path
}

func openAt(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens its database at path again.
func reopen(t *testing.T, s *Store, path string) *Store {
	t.Helper()
	s.Close()
	return openAt(t, path, Options{})
}

func record(t *testing.T, s *Store, e audit.Event) int64 {
	t.Helper()
	id, err := s.Record(t.Context(), e)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return id
}

// all pages through every event matching f and returns them newest first.
func all(t *testing.T, s *Store, f audit.Filter) []audit.Event {
	t.Helper()
	var out []audit.Event
	for {
		p, err := s.Query(t.Context(), f)
		if err != nil {
			t.Fatalf("Query(%+v): %v", f, err)
		}
		out = append(out, p.Events...)
		if p.NextCursor == "" {
			return out
		}
		f.Cursor = p.NextCursor
	}
}

func ids(evs []audit.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	clock := t0.Add(time.Hour)
	s, _ := openTest(t, Options{Clock: func() time.Time { return clock }})

	berlin := time.FixedZone("CET", 3600)
	want := audit.Event{
		Time:       t0.In(berlin), // stored and returned as UTC
		Client:     "claude-code",
		User:       "alice",
		Op:         "file.write",
		Target:     "share/docs/ünïcode 'quoted' \\ %_.txt",
		Decision:   audit.Deny,
		DecidedBy:  audit.ByRule,
		Detail:     "line one\nline two\x00after NUL",
		Bytes:      1 << 40,
		DurationMs: 1234,
		Error:      "permission denied",
	}
	want.ID = record(t, s, want)
	stamped := record(t, s, audit.Event{Op: "file.read", Decision: audit.Allow})

	got := all(t, s, audit.Filter{})
	if len(got) != 2 || got[0].ID != stamped || got[1].ID != want.ID {
		t.Fatalf("ids = %v, want [%d %d]", ids(got), stamped, want.ID)
	}
	if !got[0].Time.Equal(clock) {
		t.Errorf("zero Time stamped %v, want the clock's %v", got[0].Time, clock)
	}
	e := got[1]
	if e.Time.Location() != time.UTC || !e.Time.Equal(want.Time) {
		t.Errorf("Time = %v, want %v in UTC", e.Time, want.Time)
	}
	e.Time, want.Time = time.Time{}, time.Time{}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", e, want)
	}
}

// An event's changes come back as they were recorded, and Path finds the
// events that changed one path (as the path or a move's source), never a
// path that only starts the same.
func TestRecordChanges(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	moved := audit.Event{Op: "file.move", User: "alice", Decision: audit.Allow, Changes: []audit.Change{
		{Path: "b.txt", From: "a.txt", Kind: audit.Moved, SizeBefore: 3, SizeAfter: 3, Version: "ab", After: "ab", Mode: 0o644},
	}}
	moved.ID = record(t, s, moved)
	wrote := audit.Event{Op: "file.write", User: "alice", Decision: audit.Allow, Changes: []audit.Change{
		{Path: "a.txt.bak", Kind: audit.Created, SizeAfter: 9, After: "cd"},
		{Path: "big \"q\".bin", Kind: audit.Modified, SizeBefore: 1 << 40, NotKept: "too_large"},
	}}
	wrote.ID = record(t, s, wrote)
	record(t, s, audit.Event{Op: "file.read", User: "alice", Target: "a.txt", Decision: audit.Allow})

	got := all(t, s, audit.Filter{Changed: true})
	if len(got) != 2 || !reflect.DeepEqual(got[0].Changes, wrote.Changes) || !reflect.DeepEqual(got[1].Changes, moved.Changes) {
		t.Fatalf("changed events = %+v", got)
	}
	for p, want := range map[string][]int64{"a.txt": {moved.ID}, "b.txt": {moved.ID}, "a.txt.bak": {wrote.ID}, `big "q".bin`: {wrote.ID}, "a": nil} {
		got := ids(all(t, s, audit.Filter{Path: p}))
		if len(got) != len(want) || (len(want) > 0 && got[0] != want[0]) {
			t.Errorf("Path %q: events %v, want %v", p, got, want)
		}
	}
	if got := all(t, s, audit.Filter{}); got[0].Changes != nil {
		t.Errorf("an event without changes came back with %v", got[0].Changes)
	}
}

// Many concurrent Records share transactions and multi-row INSERTs; each
// must get the id of its own event.
func TestRecordIDsMatchEvents(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	const n = 2000
	want := make([]int64, n)
	var wg sync.WaitGroup
	for w := range 250 {
		wg.Go(func() {
			for i := w; i < n; i += 250 {
				id, err := s.Record(t.Context(), audit.Event{Bytes: int64(i), Target: fmt.Sprint("t", i)})
				if err != nil {
					t.Errorf("Record: %v", err)
				}
				want[i] = id
			}
		})
	}
	wg.Wait()
	got := all(t, s, audit.Filter{Limit: 1000})
	if len(got) != n {
		t.Fatalf("%d events, want %d", len(got), n)
	}
	for _, e := range got {
		if i := e.Bytes; want[i] != e.ID || e.Target != fmt.Sprint("t", i) {
			t.Errorf("event %+v: Record returned id %d for it", e, want[i])
		}
	}
}

func TestRecordRejectsUnstorableTime(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	for _, tm := range []time.Time{time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, err := s.Record(t.Context(), audit.Event{Time: tm}); err == nil {
			t.Errorf("Record at %v: no error", tm)
		}
	}
	if got := all(t, s, audit.Filter{}); len(got) != 0 {
		t.Errorf("stored %d events, want none", len(got))
	}
}

func TestRecordCanceledContext(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Record(ctx, audit.Event{Op: "file.read"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Record with canceled ctx: %v, want context.Canceled", err)
	}
	if got := all(t, s, audit.Filter{}); len(got) != 0 {
		t.Errorf("stored %d events, want none", len(got))
	}
}

func TestRecordAfterClose(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ctx := t.Context()
	if _, err := s.Record(ctx, audit.Event{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Record: %v, want ErrClosed", err)
	}
	if _, err := s.Prune(ctx, t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Prune: %v, want ErrClosed", err)
	}
	if _, err := s.Query(ctx, audit.Filter{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Query: %v, want ErrClosed", err)
	}
	if _, err := s.Stats(ctx, audit.Filter{}, time.Hour); !errors.Is(err, ErrClosed) {
		t.Errorf("Stats: %v, want ErrClosed", err)
	}
	ch, cancel := s.Subscribe()
	if _, ok := <-ch; ok {
		t.Error("Subscribe after Close: channel open")
	}
	cancel()
}

// Every Record that returned an id before or while Close ran is in the
// file afterwards; every other one said ErrClosed.
func TestCloseFlushesConcurrentRecords(t *testing.T) {
	t.Parallel()
	s, path := openTest(t, Options{})

	const producers, each = 32, 50
	var (
		mu     sync.Mutex
		stored []int64
		wg     sync.WaitGroup
		first  = make(chan struct{})
		once   sync.Once
	)
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				id, err := s.Record(t.Context(), audit.Event{Client: fmt.Sprint("p", p), Op: fmt.Sprint(i)})
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Record: %v", err)
					return
				}
				once.Do(func() { close(first) })
				mu.Lock()
				stored = append(stored, id)
				mu.Unlock()
			}
		})
	}
	<-first
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()

	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got := ids(all(t, s2, audit.Filter{Limit: 1000}))
	slices.Sort(got)
	slices.Sort(stored)
	if !slices.Equal(got, stored) {
		t.Errorf("after reopen %d events, Record reported %d stored", len(got), len(stored))
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	s, path := openTest(t, Options{})
	id := record(t, s, audit.Event{Op: "file.read"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if got := ids(all(t, s, audit.Filter{})); !slices.Equal(got, []int64{id}) {
			t.Errorf("after reopen ids = %v, want [%d]", got, id)
		}
		if v := userVersion(t, path); v != schemaVersion() {
			t.Errorf("user_version = %d, want %d", v, schemaVersion())
		}
		s.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "corral.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path, Options{}); err == nil {
		s.Close()
		t.Fatal("Open of a newer schema: no error")
	}
}

func TestOpenOddPath(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a dir?x=1#frag%20")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "corral?.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	record(t, s, audit.Event{Op: "file.read"})
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at its path: %v", err)
	}
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A checkpoint with nothing in flight copies the whole log, and the next
// commit starts the log over.
func TestCheckpointRestartsLog(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{MaxWALPages: 64})
	for i := range 200 {
		record(t, s, audit.Event{Bytes: int64(i)})
	}
	if err := s.checkpoint(); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	record(t, s, audit.Event{})
	var busy, frames, copied int
	if err := s.rdb.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	if frames >= 64 {
		t.Errorf("WAL holds %d pages after a checkpoint and one commit, want a fresh log", frames)
	}
}

func TestSubscribe(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	record(t, s, audit.Event{Op: "before"})
	ch, cancel := s.Subscribe()
	defer cancel()

	var want []int64
	for i := range 5 {
		want = append(want, record(t, s, audit.Event{Op: fmt.Sprint("after", i), Time: t0}))
	}
	// Record returns after publishing, so all five are already buffered.
	for i, id := range want {
		e := <-ch
		if e.ID != id || e.Op != fmt.Sprint("after", i) || !e.Time.Equal(t0) || e.Time.Location() != time.UTC {
			t.Errorf("event %d = %+v, want id %d op after%d at %v UTC", i, e, id, i, t0)
		}
	}
	cancel()
	cancel() // idempotent
	if _, ok := <-ch; ok {
		t.Error("channel open after cancel")
	}
	record(t, s, audit.Event{Op: "after cancel"}) // must not panic on a closed channel
}

func TestSlowSubscriberDropped(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{SubscriberBuffer: 2})
	slow, cancelSlow := s.Subscribe()
	fast, cancelFast := s.Subscribe()
	defer cancelFast()

	for i := range 5 { // would block forever if a full subscriber held the writer
		id := record(t, s, audit.Event{Op: fmt.Sprint(i)})
		if e := <-fast; e.ID != id {
			t.Errorf("fast subscriber got id %d, want %d", e.ID, id)
		}
	}
	var n int
	for range slow {
		n++
	}
	if n != 2 {
		t.Errorf("slow subscriber got %d events before being dropped, want 2", n)
	}
	cancelSlow() // after the drop: still harmless
	cancelSlow()
}

func TestCloseClosesSubscribers(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	ch, cancel := s.Subscribe()
	s.Close()
	if _, ok := <-ch; ok {
		t.Error("subscriber channel open after Close")
	}
	cancel()
}

func TestPrune(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	// More than one chunk before the cutoff, some after.
	const old, recent = pruneChunk*2 + 7, 25
	recordMany(t, s, old, func(i int) audit.Event {
		return audit.Event{Time: t0.Add(-time.Duration(i+1) * time.Second), Op: "old"}
	})
	keep := recordMany(t, s, recent, func(i int) audit.Event {
		return audit.Event{Time: t0.Add(time.Duration(i) * time.Second), Op: "recent"}
	})

	// Records keep working while Prune runs.
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 50 {
			if _, err := s.Record(t.Context(), audit.Event{Time: t0.Add(time.Hour), Op: "during"}); err != nil {
				t.Errorf("Record during Prune: %v", err)
			}
		}
	})
	n, err := s.Prune(t.Context(), t0)
	wg.Wait()
	if err != nil || n != old {
		t.Fatalf("Prune = %d, %v; want %d, nil", n, err, old)
	}
	left := all(t, s, audit.Filter{Until: t0.Add(time.Minute), Limit: 1000})
	got := ids(left)
	slices.Sort(got)
	if !slices.Equal(got, keep) {
		t.Errorf("left %v, want %v", got, keep)
	}
	if n, err := s.Prune(t.Context(), t0); n != 0 || err != nil {
		t.Errorf("second Prune = %d, %v; want 0, nil", n, err)
	}

	// Ids are never reused, even once the table has been emptied.
	maxID := slices.Max(ids(all(t, s, audit.Filter{Limit: 1000})))
	if _, err := s.Prune(t.Context(), t0.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if id := record(t, s, audit.Event{}); id <= maxID {
		t.Errorf("id after emptying = %d, want > %d", id, maxID)
	}
}

// recordMany records n events made by mk from a few goroutines and returns
// their ids, sorted.
func recordMany(t testing.TB, s *Store, n int, mk func(i int) audit.Event) []int64 {
	t.Helper()
	out := make([]int64, n)
	var wg sync.WaitGroup
	const workers = 16
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				id, err := s.Record(t.Context(), mk(i))
				if err != nil {
					t.Errorf("Record: %v", err)
					return
				}
				out[i] = id
			}
		})
	}
	wg.Wait()
	slices.Sort(out)
	return out
}

// schemaVersion is the user_version a fully migrated database has.
func schemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}
