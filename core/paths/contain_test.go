package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		// valid: the folder itself and below it
		{"/a", "/a", true},
		{"/a/b", "/a", true},
		{"/a/b/c", "/a/b", true},
		{"/", "/", true},
		{"/x", "/", true},
		// odd but fine: a name that merely starts like the folder
		{"/ab", "/a", false},
		{"/a-b/c", "/a", false},
		{"/a", "/a/b", false},
		// probing: parents, siblings, relative paths
		{"/", "/a", false},
		{"/b", "/a", false},
		{"a/b", "/", false},
		{"a/b", "a", true},
		// clean relative paths, as fsbox.Move and execbox's working
		// directory compare them: "ab" is not in "a", "..x" does not climb
		{"ab", "a", false},
		{"share/x", "share", true},
		{"shared/x", "share", false},
		{"..", "..", true},
		{"../x", "..", true},
		{"..x", "..", false},
		{"...", "..", false},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.dir, got)
		}
		if got := Overlap(c.p, c.dir); got != (c.want || Within(c.dir, c.p)) {
			t.Errorf("Overlap(%q, %q) = %v", c.p, c.dir, got)
		}
	}
	if !Overlap("/", "/a") || !Overlap("/a/b", "/a") || Overlap("/a", "/b") || Overlap("/ab", "/a") {
		t.Error("Overlap")
	}
}

func TestResolved(t *testing.T) {
	d := t.TempDir()
	real := filepath.Join(d, "real")
	os.Mkdir(real, 0o755)
	os.Symlink(real, filepath.Join(d, "link"))
	wantReal, _ := filepath.EvalSymlinks(real)
	if got := Resolved(filepath.Join(d, "link")); got != wantReal {
		t.Errorf("through a link: %q, want %q", got, wantReal)
	}
	if got := Resolved(d + "/missing/../x/"); got != filepath.Clean(d+"/x") {
		t.Errorf("missing: %q", got)
	}
}

func TestASCIIEqualFold(t *testing.T) {
	for a, b := range map[string]string{"Share": "share", "SHARE": "share", "companion": "COMPANION"} {
		if !ASCIIEqualFold(a, b) {
			t.Errorf("%q %q", a, b)
		}
	}
	for a, b := range map[string]string{"ſhare": "share", "\u212aey": "key", "shar": "share", "share": "shard"} {
		if ASCIIEqualFold(a, b) {
			t.Errorf("%q matched %q", a, b)
		}
	}
}
