package connect

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProgram: the command written into an app's config is the installed
// corral, or ~/.local/bin/corral (made when missing or dangling), never
// the build folder; a file or a live link to another corral is left alone.
func TestProgram(t *testing.T) {
	home := t.TempDir()
	build := filepath.Join(t.TempDir(), "bin", "corral")
	os.MkdirAll(filepath.Dir(build), 0o755)
	os.WriteFile(build, []byte("#!/bin/sh\n"), 0o755)
	link := LinkPath(home)

	if p, mk := Program("/usr/bin/corral", home); p != "/usr/bin/corral" || mk {
		t.Errorf("installed: %s %v", p, mk)
	}
	if p, mk := Program(build, home); p != link || !mk {
		t.Fatalf("from a build folder, no link yet: %s %v", p, mk)
	}
	if err := MakeLink(build, home); err != nil {
		t.Fatal(err)
	}
	if to, _ := os.Readlink(link); to != build {
		t.Fatalf("link leads to %q", to)
	}
	if p, mk := Program(build, home); p != link || mk {
		t.Errorf("with the link: %s %v", p, mk)
	}
	// After `make clean` the link dangles: it is made again.
	os.Remove(build)
	other := filepath.Join(t.TempDir(), "corral")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	if p, mk := Program(other, home); p != link || !mk {
		t.Errorf("dangling link: %s %v", p, mk)
	}
	if err := MakeLink(other, home); err != nil {
		t.Fatal(err)
	}
	// A live link to another corral, or a file, is not ours to change.
	if p, mk := Program(build, home); p != build || mk {
		t.Errorf("link to another corral: %s %v", p, mk)
	}
	os.Remove(link)
	os.WriteFile(link, []byte("mine"), 0o755)
	if p, mk := Program(build, home); p != build || mk {
		t.Errorf("a file at the link's place: %s %v", p, mk)
	}
	if err := MakeLink(build, home); err == nil {
		t.Error("MakeLink replaced a file")
	}
	if b, _ := os.ReadFile(link); string(b) != "mine" {
		t.Error("the file at the link's place changed")
	}
}
