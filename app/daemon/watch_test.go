package daemon

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// TestConfigWatchIgnoresDatabaseCommits: config.toml's folder also holds
// corral.db and its -wal, written on every audit commit. Those commits
// must not wake the config watcher (they did, 46 µs a call, when it
// watched the folder with fsnotify), while config.toml edited in place
// and replaced by rename (as editors save) are still seen.
func TestConfigWatchIgnoresDatabaseCommits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("# one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "corral.db")+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT)"); err != nil {
		t.Fatal(err)
	}

	w, err := newFileWatch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- w.run(t.Context(), func() { changes <- struct{}{} }) }()
	// waitChange waits for the change what made to be reported.
	waitChange := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case err := <-done:
			t.Fatalf("%s: the watch ended: %v", what, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: not seen in 30 s", what)
		}
	}

	for i := range 200 {
		if _, err := db.Exec("INSERT INTO audit (what) VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	// Events arrive in order: once the edit below is seen, any event of
	// the commits before it has been read too.
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# two\n")
	f.Close()
	waitChange("an edit in place")
	if n := w.wakeups.Load(); n != 1 {
		t.Errorf("200 commits and one edit of config.toml woke the watcher %d times, want 1", n)
	}
	if len(changes) != 0 {
		t.Errorf("%d more changes reported, want none", len(changes))
	}

	// An editor that saves by rename.
	tmp := filepath.Join(dir, ".config.toml.swp")
	os.WriteFile(tmp, []byte("# three\n"), 0o600)
	// Writing the temporary file itself is not a change of config.toml.
	before := len(changes)
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
	waitChange("a replacement by rename")
	if before != 0 {
		t.Errorf("writing another file in the folder reported %d changes", before)
	}
	// And the file in place after that (the new inode).
	os.WriteFile(cfg, []byte("# four\n"), 0o600)
	waitChange("an edit of the replaced file")
	for i := range 200 {
		db.Exec("INSERT INTO audit (what) VALUES (?)", i)
	}
	os.WriteFile(cfg, []byte("# five\n"), 0o600)
	waitChange("a last edit")
	if len(changes) != 0 {
		t.Errorf("%d changes reported that were not config.toml's", len(changes))
	}
}
