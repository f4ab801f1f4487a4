package store

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"corral/core/audit"
)

// atSchema is a fresh database at path with the first n migrations
// applied, as a Corral of that schema left it; the caller closes db.
func atSchema(t *testing.T, n int) (path string, db *sql.DB) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "corral.db")
	db, err := sql.Open("sqlite3", dsn(path, url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:n] {
		if err := apply(db, m, n); err != nil {
			t.Fatal(err)
		}
	}
	return path, db
}

// A log written by the schema before migration 011 (AUTOINCREMENT ids,
// the newest events already pruned) is rebuilt in place: every event keeps
// its id and its fields, the indexes are there again, and new ids start
// after the largest the old log ever gave, not after the largest left.
func TestUpgradeToRowidIDs(t *testing.T) {
	t.Parallel()
	path, db := atSchema(t, 10)
	changes := `[{"path":"a.txt","kind":"modified"}]`
	for i := range 6 {
		if _, err := db.Exec(`INSERT INTO audit_events (time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes, answer, answered_by, rule)
			VALUES (?, 'a', 'alice', 'file.write', ?, 'allow', 'scope', ?, 4, 1, '', ?, 'allow_once', 'tray', 'ru_1')`,
			t0.Add(time.Duration(i)*time.Minute).UnixNano(), fmt.Sprint("t", i), fmt.Sprint("d", i, " ", audit.Pending), changes); err != nil {
			t.Fatal(err)
		}
	}
	// The two newest gone (ids 5 and 6): sqlite_sequence still says 6.
	if _, err := db.Exec(`DELETE FROM audit_events WHERE id > 4`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s := openAt(t, path, Options{})
	got := all(t, s, audit.Filter{})
	if !slices.Equal(ids(got), []int64{4, 3, 2, 1}) {
		t.Fatalf("upgraded ids %v, want 4 3 2 1", ids(got))
	}
	for _, e := range got {
		i := e.ID - 1
		if e.Target != fmt.Sprint("t", i) || e.Detail != fmt.Sprint("d", i, " ", audit.Pending) || e.Bytes != 4 || e.DurationMs != 1 ||
			len(e.Changes) != 1 || e.Changes[0].Path != "a.txt" || e.Answer != "allow_once" || e.AnsweredBy != "tray" || e.Rule != "ru_1" ||
			!e.Time.Equal(t0.Add(time.Duration(i)*time.Minute)) {
			t.Errorf("upgraded event %+v", e)
		}
	}
	if u, err := s.Unfinished(t.Context(), 10); err != nil || len(u) != 4 {
		t.Errorf("Unfinished after the upgrade: %d events, %v", len(u), err)
	}
	if id := record(t, s, audit.Event{Client: "a"}); id != 7 {
		t.Errorf("first id after the upgrade = %d, want 7 (6 was given before)", id)
	}
	var autoinc int
	if err := s.rdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'audit_events' AND sql LIKE '%AUTOINCREMENT%'`).Scan(&autoinc); err != nil || autoinc != 0 {
		t.Errorf("audit_events still AUTOINCREMENT (%d, %v)", autoinc, err)
	}
	var indexes []string
	rows, err := s.rdb.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_events' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		indexes = append(indexes, n)
	}
	rows.Close()
	want := []string{"audit_events_changed", "audit_events_client", "audit_events_decision", "audit_events_op",
		"audit_events_time", "audit_events_unfinished", "audit_events_user"}
	if !slices.Equal(indexes, want) {
		t.Errorf("indexes after the upgrade %v, want %v", indexes, want)
	}
}

// Ids stay unique and growing across a restart after Prune removed the
// newest events: the next id is after the largest ever given.
func TestIDsNotReusedAcrossRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "corral.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for range 5 {
		last = record(t, s, audit.Event{Time: t0})
	}
	if _, err := s.Prune(t.Context(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, Options{})
	if id := record(t, s, audit.Event{Time: t0}); id != last+1 {
		t.Errorf("id after prune and restart = %d, want %d", id, last+1)
	}
}

// walPages is how many pages the WAL of the store at path holds, read
// from its size (a frame is a 24-byte header and a page).
func walPages(t *testing.T, path string) float64 {
	t.Helper()
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return float64(max(st.Size()-32, 0)) / (4096 + 24)
}

// TestPagesPerSequentialCall: a sequential caller's event is one
// transaction, and each page it writes is a 4 KiB write to the log, most
// of an insert's cost. The schema before 011 wrote 6.8 pages per event
// (sqlite_sequence's page on every commit) and 13.1 for a journaled
// write (recorded pending, then completed with an UPDATE that rewrote
// the time and changes indexes); now 5.8 and 10.1.
func TestPagesPerSequentialCall(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "corral.db")
	s := openAt(t, path, Options{MaxWALPages: 1 << 30}) // no checkpoint meanwhile
	clients := []string{"claude", "codex", "gemini", "phone"}
	ops := []string{"file.read", "file.write", "folder.list", "command.run", "file.stat"}
	mk := func(i int) audit.Event {
		return audit.Event{Client: clients[i%len(clients)], User: "alice", Op: ops[i%len(ops)],
			Target: fmt.Sprint("share/docs/report", i%500, ".md"), Decision: audit.Allow, DecidedBy: audit.ByScope, Bytes: 4096}
	}
	recordMany(t, s, 5000, mk)
	if _, err := s.rdb.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		record(t, s, mk(i))
	}
	read := walPages(t, path) / n
	for i := range n {
		e := mk(i)
		e.Op, e.Detail = "file.write", "4096 bytes "+audit.Pending
		e.Changes = []audit.Change{{Path: e.Target, Kind: audit.Modified, SizeBefore: 4000, SizeAfter: 4096, Version: "9f86d0", After: "603030", Mode: 0o644}}
		e.ID = record(t, s, e)
		e.Detail = "4096 bytes"
		if err := s.Complete(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	write := walPages(t, path)/n - read
	t.Logf("pages per event %.1f, per journaled write %.1f", read, write)
	if read > 6.3 || write > 11 {
		t.Errorf("pages per event %.1f, per journaled write %.1f; want at most 6.3 and 11", read, write)
	}
}
