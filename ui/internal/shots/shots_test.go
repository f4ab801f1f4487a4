package shots

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestSave(t *testing.T) {
	t.Setenv("CORRAL_SHOTS", "")
	Save(t, "none", func() image.Image { t.Error("captured with CORRAL_SHOTS unset"); return nil })

	dir := filepath.Join(t.TempDir(), "shots")
	t.Setenv("CORRAL_SHOTS", dir)
	Save(t, "square", func() image.Image { return image.NewRGBA(image.Rect(0, 0, 3, 2)) })
	f, err := os.Open(filepath.Join(dir, "square.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds() != image.Rect(0, 0, 3, 2) {
		t.Errorf("square.png: %v %v", img, err)
	}
}
