package versions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store whose folder was removed while Corral runs is made again by
// Writable, and keeps versions again; a folder that cannot be made
// (its parent is a file) is an error that names no host path.
func TestWritableRemakesTheStore(t *testing.T) {
	t.Parallel()
	s := open(t, Config{})
	if err := s.Writable(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	if err := s.Writable(); err != nil {
		t.Fatalf("after the folder was removed: %v", err)
	}
	if _, err := s.PutBytes(Owner, []byte("kept again")); err != nil {
		t.Fatalf("put into the store made again: %v", err)
	}

	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Dir(), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.Writable()
	if err == nil || !strings.Contains(err.Error(), "version store") || strings.Contains(err.Error(), filepath.Dir(s.Dir())) {
		t.Fatalf("a store that cannot be made: %v", err)
	}
}
