package overlay

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStage: each path gets the next place under StageDir, and the spec
// is the fields asroot mode reads, each ended by a NUL.
func TestStage(t *testing.T) {
	var s Stage
	got := []string{s.Overlay("/a", "/u", "/w"), s.IDMapped("/b"), s.Bind("/c")}
	if want := []string{"/sys/0", "/sys/1", "/sys/2"}; !slices.Equal(got, want) {
		t.Errorf("places %q, want %q", got, want)
	}
	if want := "o\x00/a\x00/u\x00/w\x00i\x00/b\x00b\x00/c\x00"; string(s.Spec()) != want {
		t.Errorf("spec %q, want %q", s.Spec(), want)
	}
}

func TestHelperArgs(t *testing.T) {
	argv := []string{"bwrap", "--args", "7"}
	if got, want := HelperArgs(false, 9, 10, argv), []string{"overlay", "9", "10", "--", "bwrap", "--args", "7"}; !slices.Equal(got, want) {
		t.Errorf("overlay: %q, want %q", got, want)
	}
	if got, want := HelperArgs(true, 9, 10, argv), []string{"asroot", "2147483646", "2147483646", "9", "10", "--", "bwrap", "--args", "7"}; !slices.Equal(got, want) {
		t.Errorf("asroot: %q, want %q", got, want)
	}
}

// TestLayer: the folders are made and named in the spec; a path
// overlayfs cannot be given (a comma in it) is refused, and RemoveLayers
// takes away what was made, work folders of mode 0 included.
func TestLayer(t *testing.T) {
	dir := t.TempDir()
	upper, work, merged, spec, err := Layer(filepath.Join(dir, "0"), "/src")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{upper, work, merged} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}
	if want := strings.Join([]string{"/src", upper, work, merged}, "\x00") + "\x00"; string(spec) != want {
		t.Errorf("spec %q, want %q", spec, want)
	}
	if _, _, _, _, err := Layer(filepath.Join(dir, "1"), "/a,b"); err == nil || !strings.Contains(err.Error(), "cannot be given to overlayfs") {
		t.Errorf("a comma in the lower path: %v", err)
	}
	os.MkdirAll(filepath.Join(work, "work"), 0o700)
	os.Chmod(filepath.Join(work, "work"), 0)
	RemoveLayers(dir)
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("layer folder left: %v", err)
	}
}
