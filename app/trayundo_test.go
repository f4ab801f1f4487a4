package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/config"
	"corral/app/daemon"
	"corral/core/sandbox"
)

// The tray's "Undo last change by …" on a real Corral (SQLite, version
// store, sandbox): it names the agent's newest change, and undoing it
// puts the file back byte for byte and leaves the other agent's alone.
func TestTrayUndoLastChange(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, ".local/share/corral")
	files := config.Files{
		Config: filepath.Join(home, ".config/corral/config.toml"), DB: filepath.Join(dir, "corral.db"),
		Secret: filepath.Join(dir, "secret.key"), OwnerToken: filepath.Join(dir, "owner.token"),
		Sandbox: filepath.Join(dir, "sandbox"),
	}
	os.MkdirAll(filepath.Dir(files.Config), 0o700)
	cfg := `[[users]]
id = "alice"
[[users]]
id = "bob"
[[clients]]
name = "alice-agent"
key = "alice-key-0123456789abcdef"
user = "alice"
[[clients]]
name = "bob-agent"
key = "bob-key-0123456789abcdef01"
user = "bob"
`
	if err := os.WriteFile(files.Config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(daemon.Options{Files: files, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := t.Context()
	alice := sandbox.Caller{Client: "alice-agent", User: "alice"}
	bob := sandbox.Caller{Client: "bob-agent", User: "bob"}
	write := func(c sandbox.Caller, path, content string) {
		t.Helper()
		if _, err := d.Box.Write(ctx, c, sandbox.WriteArgs{Path: path, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	write(alice, "notes.txt", "first\n")
	write(alice, "notes.txt", "second\n")
	write(bob, "bob.txt", "bob's\n")

	u := trayUndo{d.Store, d.Undo}
	if _, err := u.LastChange(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "has changed no files") {
		t.Errorf("an agent without changes: %v", err)
	}
	lc, err := u.LastChange(ctx, "alice-agent")
	if err != nil {
		t.Fatal(err)
	}
	if lc.Client != "alice-agent" || lc.Op != "file.write" || len(lc.Files) != 1 || lc.Files[0].Path != "notes.txt" ||
		lc.Files[0].What != "changed; undoing puts its earlier content back" || lc.Conflicts() != 0 {
		t.Fatalf("alice's last change: %+v", lc)
	}
	msg, err := u.Undo(ctx, lc.EventID)
	if err != nil || !strings.HasPrefix(msg, "Undone: 1 file put back.") {
		t.Fatalf("undo: %q %v", msg, err)
	}
	base := d.Config.Sandbox.Base
	if got, _ := os.ReadFile(filepath.Join(base, "alice", "notes.txt")); string(got) != "first\n" {
		t.Errorf("notes.txt after the undo: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(base, "bob", "bob.txt")); string(got) != "bob's\n" {
		t.Errorf("bob.txt after alice's undo: %q", got)
	}
	// Afterwards the same change shows as already undone.
	if lc, err := u.LastChange(ctx, "alice-agent"); err != nil || lc.Files[0].What != "changed; it is already as it was" {
		t.Errorf("alice's last change after the undo: %+v %v", lc, err)
	}
	// A file changed again since is a conflict: named, refused in words,
	// nothing written.
	notes := filepath.Join(base, "alice", "notes.txt")
	write(alice, "notes.txt", "third\n")
	lc, err = u.LastChange(ctx, "alice-agent")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("the owner's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lc2, _ := u.LastChange(ctx, "alice-agent")
	if lc2.EventID != lc.EventID || lc2.Conflicts() != 1 || !strings.Contains(lc2.Files[0].Conflict, "changed after this event") {
		t.Errorf("a conflict: %+v", lc2)
	}
	if _, err := u.Undo(ctx, lc.EventID); err == nil || !strings.Contains(err.Error(), "changed again") {
		t.Errorf("undo over a conflict: %v", err)
	}
	if got, _ := os.ReadFile(notes); string(got) != "the owner's\n" {
		t.Errorf("notes.txt after a refused undo: %q", got)
	}
}
