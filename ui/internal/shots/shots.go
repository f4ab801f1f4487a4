// Package shots keeps pictures of the windows the ui tests draw with
// Fyne's software painter, for the eye (the tests' assertions are what
// they check): Dir is $CORRAL_SHOTS, "" when it is not set, and Save
// writes one picture there as a PNG. It is for tests only.
package shots

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Dir is where pictures go ($CORRAL_SHOTS), "" for nowhere.
func Dir() string { return os.Getenv("CORRAL_SHOTS") }

// Save writes the picture capture draws to name.png in Dir, making the
// folder; when Dir is "" it does nothing and capture is not called (so
// a capture may resize the window first). A failure to write fails t.
func Save(t testing.TB, name string, capture func() image.Image) {
	t.Helper()
	dir := Dir()
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, capture()); err != nil {
		t.Fatal(err)
	}
}
