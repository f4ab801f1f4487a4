package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/store/storetest"
)

// oldDB makes, at path, a database as Corral left it before migration
// 011 (schema 010, audit_events with AUTOINCREMENT) holding n events with
// ids 1..n, whose target is "t<id>"; five more were recorded and deleted,
// so sqlite_sequence says n+5.
func oldDB(t *testing.T, path string, n int) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for v := 1; v <= 10; v++ {
		found, _ := filepath.Glob(filepath.Join("..", "store", "migrations", fmt.Sprintf("%03d_*.sql", v)))
		if len(found) != 1 {
			t.Fatalf("migration %03d: %v", v, found)
		}
		body, err := os.ReadFile(found[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", found[0], err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 10"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO audit_events (time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes, answer, answered_by, rule)
		VALUES (?, 'old-agent', 'root', 'file.write', ?, 'allow', 'scope', 'written', 4, 1, '', '', '', '', '')`)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour).UnixNano()
	for i := 1; i <= n+5; i++ {
		if _, err := st.Exec(t0+int64(i), fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`DELETE FROM audit_events WHERE id > ?`, n); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

// oldEvents checks that the database at path holds the n events of oldDB
// exactly once, with their ids and targets, and no event with an id in
// n+1..n+5; it returns the schema version.
func oldEvents(t *testing.T, path string, n int) int {
	t.Helper()
	integrity(t, path)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version, count, distinct, wrong, lo, hi, reused int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	err = db.QueryRow(`SELECT count(*), count(DISTINCT id), coalesce(sum(target <> 't' || id), 0), coalesce(min(id), 0), coalesce(max(id), 0)
		FROM audit_events WHERE client = 'old-agent'`).Scan(&count, &distinct, &wrong, &lo, &hi)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM audit_events WHERE id > ? AND id <= ?`, n, n+5).Scan(&reused); err != nil {
		t.Fatal(err)
	}
	if count != n || distinct != n || wrong != 0 || lo != 1 || hi != n || reused != 0 {
		t.Fatalf("schema %d: %d events (%d distinct ids %d..%d, %d with another target, %d with a deleted id), want %d with ids 1..%d",
			version, count, distinct, lo, hi, wrong, reused, n, n)
	}
	return version
}

// migrateConfig is the config of the migration tests: one agent.
const migrateConfig = "[[users]]\nid = \"root\"\nname = \"root\"\n\n[[clients]]\nname = \"agent\"\nkey = \"migrate-agent-0123456789abcdef\"\nuser = \"root\"\n"

// maxID is the largest id in the audit log at path.
func maxID(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	if err := db.QueryRow(`SELECT coalesce(max(id), 0) FROM audit_events`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestMigrationKilled: the daemon is SIGKILLed while store migrations 011
// (audit_events rebuilt without AUTOINCREMENT) and 012 upgrade a database
// of old events, at each migration kill point and, in the long form, at
// moments chosen by how far the rebuild has written its -wal. After each
// kill the database is whole, every old event is there once with its id;
// the daemon then starts, its new events take ids after every id ever
// given (n+5: the old AUTOINCREMENT's sequence), and ids stay unused once
// Prune has removed the newest events, across restarts.
//
// 20,000 events by default; CORRAL_LONG_FAULTS=1 makes it 200,000 and
// adds kills in the middle of the rebuild.
func TestMigrationKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon and a database of old events")
	}
	t.Parallel()
	n := 20000
	long := os.Getenv("CORRAL_LONG_FAULTS") != ""
	if long {
		n = 200000
	}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "config.toml"), migrateConfig)
	db := filepath.Join(home, "corral.db")
	oldDB(t, db, n)

	// Each start runs the migrations its database lacks: the third kill
	// leaves 011 done, so the fourth start's first commit is 012's.
	for i, at := range []string{"migrate.begin:1", "migrate.commit:1", "migrate.done:1", "migrate.commit:1"} {
		if !killStart(t, home, "CORRAL_KILL_AT="+at, 0) {
			t.Fatalf("the daemon served past kill point %s", at)
		}
		v := oldEvents(t, db, n)
		if want := []int{10, 10, 11, 11}[i]; v != want {
			t.Errorf("killed at %s: schema %d, want %d", at, v, want)
		}
		t.Logf("killed at %s: schema %d, %d events intact", at, v, n)
	}
	if long {
		// Back to schema 010 through a fresh old database, then kills
		// while 011 copies the events: when its -wal reaches each size.
		os.Remove(db)
		os.Remove(db + "-wal")
		os.Remove(db + "-shm")
		oldDB(t, db, n)
		for _, mb := range []int64{1, 8, 24} {
			v := killAtWAL(t, home, db, mb<<20)
			v2 := oldEvents(t, db, n)
			t.Logf("killed with the -wal at %d MiB (%s): schema %d, %d events intact", mb, v, v2, n)
		}
	}

	r := startServeIn(t, home)
	if v := oldEvents(t, db, n); v != 12 {
		t.Fatalf("schema %d after the daemon started, want 12", v)
	}
	ctx := t.Context()
	write := func(r *running, name string) int64 {
		t.Helper()
		before := maxID(t, db)
		c := dialAgent(ctx, t, r)
		if _, err := c.Call(ctx, "file.write", map[string]any{"path": name, "content": name}); err != nil {
			t.Fatal(err)
		}
		c.Close()
		after := maxID(t, db)
		if after <= before {
			t.Fatalf("max id %d after a write, %d before", after, before)
		}
		return after
	}
	first := write(r, "after-upgrade.txt")
	var lowest int64
	dbr, _ := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	dbr.QueryRow(`SELECT min(id) FROM audit_events WHERE id > ?`, n).Scan(&lowest)
	dbr.Close()
	if lowest != int64(n)+6 {
		t.Errorf("the first id after the upgrade is %d, want %d (the old sequence said %d)", lowest, n+6, n+5)
	}
	t.Logf("upgraded: %d old events, new ids %d..%d", n, lowest, first)

	// The newest events made old; Prune removes them at start-up.
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	w, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE audit_events SET time_ns = 1 WHERE id > ?`, n); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for round := range 2 {
		r = startServeIn(t, home)
		next := write(r, fmt.Sprintf("round%d.txt", round))
		dbr, _ := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		var gone int
		dbr.QueryRow(`SELECT count(*) FROM audit_events WHERE id > ? AND id <= ?`, n, first).Scan(&gone)
		dbr.Close()
		if gone != 0 {
			t.Fatalf("round %d: %d pruned events still there", round, gone)
		}
		if next <= first {
			t.Fatalf("round %d: a new event took id %d, at or below %d, given before Prune removed it", round, next, first)
		}
		t.Logf("round %d: pruned up to %d, next id %d", round, first, next)
		first = next
		r.cmd.Process.Kill() // SIGKILL: the last id must survive this too
		r.cmd.Wait()
		w, _ := sql.Open("sqlite3", "file:"+db)
		if _, err := w.Exec(`UPDATE audit_events SET time_ns = 1 WHERE id > ?`, n); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	oldEvents(t, db, n)
}

// killAtWAL starts the daemon in home and SIGKILLs it once db's -wal
// holds size bytes (or once it served: then it reports "served"); it
// returns what it saw.
func killAtWAL(t *testing.T, home, db string, size int64) string {
	t.Helper()
	cmd, out := serveCmd(t, corralBinary(t), "127.0.0.1:0", append(os.Environ(), "CORRAL_HOME="+home), nil)
	serving, dead := watchServe(cmd, out)
	defer func() { cmd.Process.Kill(); <-dead }()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-dead:
			return "died"
		case <-serving:
			return "served"
		default:
		}
		if fi, err := os.Stat(db + "-wal"); err == nil && fi.Size() >= size {
			cmd.Process.Kill()
			return fmt.Sprintf("-wal %d bytes", fi.Size())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return "timed out"
}

// TestMigrationOnFullDisk: when the disk holding the database fills while
// migration 011 rebuilds audit_events, start-up refuses with a sentence
// that says so, and the old database is intact; once there is room, the
// next start upgrades it.
func TestMigrationOnFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon and a database of old events")
	}
	t.Parallel()
	dir := storetest.SmallDisk(t, "64m")
	home := filepath.Join(dir, "corral")
	os.MkdirAll(home, 0o700)
	writeFile(t, filepath.Join(home, "config.toml"), migrateConfig)
	db := filepath.Join(home, "corral.db")
	n := 20000
	oldDB(t, db, n)
	for i, bs := range []string{"1M", "4k"} {
		out, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "fill"+bs), "bs="+bs).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "No space left") {
			t.Fatalf("dd %d did not fill the disk: %v %s", i, err, out)
		}
	}
	// 1 MiB free: room for start-up's small files, not for the rebuild
	// of a 20,000-event table.
	fill := filepath.Join(dir, "fill1M")
	if fi, err := os.Stat(fill); err != nil || os.Truncate(fill, fi.Size()-1<<20) != nil {
		t.Fatalf("making 1 MiB of room: %v", err)
	}
	if fi, err := os.Stat(db); err == nil {
		t.Logf("the old database: %d bytes", fi.Size())
	}
	cmd := exec.Command(corralBinary(t), "serve", "--headless", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CORRAL_HOME="+home)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the daemon started on a full disk it could not migrate on:\n%s", out)
	}
	t.Logf("start-up on a full disk: %v\n%s", err, out)
	if err == nil || !strings.Contains(string(out), "the disk holding it is full. Free some space there and start Corral again; the database is as it was") {
		t.Errorf("start-up on a full disk: %v, want a refusal that says the disk is full:\n%s", err, out)
	}
	for _, bs := range []string{"1M", "4k"} {
		os.Remove(filepath.Join(dir, "fill"+bs))
	}
	if v := oldEvents(t, db, n); v != 10 {
		t.Errorf("schema %d after the refused start, want 10", v)
	}
	r := startServeIn(t, home)
	if v := oldEvents(t, db, n); v != 12 {
		t.Errorf("schema %d once there is room, want 12", v)
	}
	_ = r
}
