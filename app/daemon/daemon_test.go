package daemon

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/config"
)

func TestRootsOverlappingCorralsFilesAreRefused(t *testing.T) {
	home := t.TempDir()
	files := config.Files{
		Config: filepath.Join(home, ".config/corral/config.toml"), DB: filepath.Join(home, ".local/share/corral/corral.db"),
		Secret: filepath.Join(home, ".local/share/corral/secret.key"), OwnerToken: filepath.Join(home, ".local/share/corral/owner.token"),
		Sandbox: filepath.Join(home, ".local/share/corral/sandbox"),
	}
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	os.MkdirAll(filepath.Join(home, ".local/share/corral/sandbox"), 0o700)
	os.Symlink(filepath.Join(home, ".local"), filepath.Join(home, "Documents", "sneaky"))
	for root, bad := range map[string]bool{
		"~":                                 true, // contains everything
		"~/.local":                          true,
		"~/.local/share/corral/sandbox/bob": true,
		"~/Documents/sneaky":                true, // a symlink to ~/.local
		"~/Documents":                       false,
	} {
		checkConfig(t, files, home, "[[sandbox.roots]]\npath = \""+root+"\"\n", "sandbox.roots[0].path", bad)
	}
}

// checkConfig runs CheckRoots on the config text and wants it refused,
// naming key, exactly when bad.
func checkConfig(t *testing.T, files config.Files, home, text, key string, bad bool) {
	t.Helper()
	cfg, err := config.Parse(files.Config, []byte(text), home, files.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.CheckRoots(files)
	if (err != nil) != bad {
		t.Errorf("%q: %v, want refused=%v", text, err, bad)
	}
	if err != nil && !strings.Contains(err.Error(), key) {
		t.Errorf("%q: error does not name the key %s: %v", text, key, err)
	}
}

// A sandbox base that holds Corral's own files would make them part of a
// user's or the shared folder (user "corral" under base /srv with
// CORRAL_HOME=/srv/corral): refused, naming the key.
func TestBaseHoldingCorralsFilesIsRefused(t *testing.T) {
	home := t.TempDir()
	corral := filepath.Join(home, "srv", "corral")
	files := config.Files{
		Config: filepath.Join(corral, "config.toml"), DB: filepath.Join(corral, "corral.db"),
		Secret: filepath.Join(corral, "secret.key"), OwnerToken: filepath.Join(corral, "owner.token"),
		Sandbox: filepath.Join(corral, "sandbox"),
	}
	for base, bad := range map[string]bool{
		"~/srv":           true,
		"~/srv/corral":    true,
		"~":               true,
		"/":               true,
		"~/srv/corral/sb": false, // the default shape: the sandbox inside Corral's home
		"~/elsewhere":     false,
	} {
		checkConfig(t, files, home, "[sandbox]\nbase = \""+base+"\"\n", "sandbox.base", bad)
	}
}

// TestRunningURL: the CLI trusts the URL in the lock file only while a
// daemon holds the lock, and only a loopback http URL.
func TestRunningURL(t *testing.T) {
	dir := t.TempDir()
	files := config.Files{DB: filepath.Join(dir, "corral.db")}
	if u := RunningURL(files); u != "" {
		t.Errorf("no lock file: %q", u)
	}
	// Left by a daemon that died: nobody holds the lock.
	os.WriteFile(LockFile(files), []byte("http://127.0.0.1:4444\n"), 0o600)
	if u := RunningURL(files); u != "" {
		t.Errorf("stale lock file: %q", u)
	}
	lock, err := acquire(files)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if b, _ := os.ReadFile(LockFile(files)); len(b) != 0 {
		t.Errorf("acquire kept the dead daemon's URL: %q", b)
	}
	if _, err := acquire(files); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second acquire: %v", err)
	}
	for content, want := range map[string]string{
		"http://127.0.0.1:4444\n":    "http://127.0.0.1:4444",
		"http://[::1]:4444":          "http://[::1]:4444",
		"http://192.168.1.5:4444":    "",
		"https://127.0.0.1:4444":     "",
		"http://evil.example:80":     "",
		"http://127.0.0.1:4444/x?y=": "",
	} {
		lock.Truncate(0)
		lock.WriteAt([]byte(content), 0)
		if u := RunningURL(files); u != want {
			t.Errorf("%q: %q, want %q", content, u, want)
		}
	}
}

// TestKeepNetInit: the daemon runs its own copy of corral-netinit, so the
// installed one may be replaced or removed under it (apt upgrade, apt
// remove). Before, commands failed with "fork/exec
// /usr/lib/corral/corral-netinit: no such file or directory" once the
// package was removed.
func TestKeepNetInit(t *testing.T) {
	installed := filepath.Join(t.TempDir(), "corral-netinit")
	os.WriteFile(installed, []byte("#!/bin/sh\necho v1\n"), 0o755)
	data := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	kept := keepNetInit(installed, data, log)
	if kept != filepath.Join(data, "corral-netinit") {
		t.Fatalf("kept at %q", kept)
	}
	os.Remove(installed) // apt remove
	out, err := exec.Command(kept).Output()
	if err != nil || string(out) != "v1\n" {
		t.Errorf("the kept helper after removal: %v %q", err, out)
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("kept helper: %v %v", fi, err)
	}
	// A restart after an upgrade takes the new one.
	os.WriteFile(installed, []byte("#!/bin/sh\necho v2\n"), 0o755)
	if out, _ := exec.Command(keepNetInit(installed, data, log)).Output(); string(out) != "v2\n" {
		t.Errorf("after an upgrade: %q", out)
	}
	if left, _ := filepath.Glob(filepath.Join(data, ".corral-netinit-*")); len(left) != 0 {
		t.Errorf("temporary copies left: %v", left)
	}
	// No place to copy to: the installed one, as before.
	if got := keepNetInit(installed, filepath.Join(data, "missing"), log); got != installed {
		t.Errorf("without a data folder: %q", got)
	}
	if keepNetInit("", data, log) != "" {
		t.Error("no helper became one")
	}
}
