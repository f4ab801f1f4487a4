//go:build ignore

// gen renders the icon SVGs in this folder to the PNGs next to them:
// corral.png (256 px, the application icon) and tray*.png (64 px, the
// tray icon in its three states). Run it after editing an SVG:
//
//	go run ./assets/icons/gen.go
package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"github.com/fyne-io/oksvg"
	"github.com/srwiley/rasterx"
)

func main() {
	dir := filepath.Join("assets", "icons")
	jobs := []struct {
		svg, png string
		size     int
	}{
		{"corral.svg", "corral.png", 256},
		{"corral.svg", "tray.png", 64},
		{"corral-pending.svg", "tray-pending.png", 64},
		{"corral-paused.svg", "tray-paused.png", 64},
	}
	for _, j := range jobs {
		if err := render(filepath.Join(dir, j.svg), filepath.Join(dir, j.png), j.size); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func render(src, dst string, size int) error {
	icon, err := oksvg.ReadIcon(src, oksvg.StrictErrorMode)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	icon.SetTarget(0, 0, float64(size), float64(size))
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	scanner := rasterx.NewScannerGV(size, size, img, img.Bounds())
	icon.Draw(rasterx.NewDasher(size, size, scanner), 1)
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
