package wiring

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/config"
	"corral/store"
)

// files are where a test's Corral in dir keeps its own files: a folder
// of their own in the owner's home, as XDG places them.
func files(dir string) config.Files {
	own := filepath.Join(dir, ".local", "share", "corral")
	return config.Files{
		Config: filepath.Join(own, "config.toml"), DB: filepath.Join(own, "corral.db"),
		Secret: filepath.Join(own, "secret.key"), OwnerToken: filepath.Join(own, "owner.token"),
		Sandbox: filepath.Join(dir, "sandbox"),
	}
}

// parse is text as config.toml for a Corral in dir.
func parse(t *testing.T, dir, text string) (*config.Config, config.Files) {
	t.Helper()
	f := files(dir)
	if err := os.MkdirAll(filepath.Dir(f.DB), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(f.Config, []byte(text), dir, f.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, f
}

// TestBuildRefusesRootsOverCorralsFiles: a [[sandbox.roots]] holding
// Corral's own folder is refused by Build itself, so no way of starting
// Corral (the daemon, a reload, app/server's tests) skips the check.
func TestBuildRefusesRootsOverCorralsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, f := parse(t, dir, fmt.Sprintf("[[sandbox.roots]]\npath = %q\naccess = \"read\"\n", filepath.Join(dir, ".local")))
	if _, err := Build(Setup{Config: cfg, Files: f, Home: dir}); err == nil || !strings.Contains(err.Error(), "sandbox.roots[0].path") {
		t.Errorf("Build with a root over Corral's files: %v", err)
	}
	if _, err := os.Stat(f.Secret); err == nil {
		t.Error("Build made the secret before it refused the config")
	}
}

// TestBuildWiresOnePolicyAndOneSecret: the sandbox asks through the
// policy Build returns, the secret is made, and RotateLinks replaces it
// on disk; OnPause stops commands without failing when none run.
func TestBuildWiresOnePolicyAndOneSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, f := parse(t, dir, "")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(f.DB, store.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := Build(Setup{Config: cfg, Files: f, Store: st, Home: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Box.Close()
	if p.Policy == nil || p.Box.Policy() != p.Policy || p.Links == nil || p.Undo == nil {
		t.Fatalf("parts %+v: the sandbox's policy is not the one returned, or a part is missing", p)
	}
	before, err := os.ReadFile(f.Secret)
	if err != nil || len(before) == 0 {
		t.Fatalf("secret after Build: %v", err)
	}
	if err := p.RotateLinks(context.Background(), "owner"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(f.Secret); bytes.Equal(after, before) {
		t.Error("RotateLinks left the secret as it was")
	}
	p.OnPause(true)
	p.OnPause(false)
}
