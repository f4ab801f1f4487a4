package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/boombuler/barcode/qr"
)

// maxQRText bounds what a QR code is made of: a link of this server.
const maxQRText = 2048

// qrSVG draws text as a QR code in SVG: dark modules on white with the
// quiet zone scanners need, one path of unit squares, whatever the page's
// theme. It holds nothing but the drawing: no text, no script.
func qrSVG(text string) (string, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", err
	}
	const quiet = 4
	b := code.Bounds()
	n := b.Dx()
	side := n + 2*quiet
	var d strings.Builder
	for y := range b.Dy() {
		for x := 0; x < n; x++ {
			if !dark(code.At(b.Min.X+x, b.Min.Y+y)) {
				continue
			}
			w := 1
			for x+w < n && dark(code.At(b.Min.X+x+w, b.Min.Y+y)) {
				w++
			}
			fmt.Fprintf(&d, "M%d %dh%dv1h-%dz", x+quiet, y+quiet, w, w)
			x += w - 1
		}
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" shape-rendering="crispEdges" role="img" aria-label="QR code of this link">`+
		`<rect width="%d" height="%d" fill="#fff"/><path d="%s" fill="#000"/></svg>`, side, side, side*6, side*6, side, side, d.String()), nil
}

func dark(c interface{ RGBA() (r, g, b, a uint32) }) bool {
	r, _, _, _ := c.RGBA()
	return r == 0
}

// qrImage serves GET /qr.svg?text=URL to the signed-in owner: the QR code
// of a link of this server (an http or https URL), for the Links page and
// the dashboard's result links.
func (s *Server) qrImage(w http.ResponseWriter, r *http.Request) {
	if !s.session(r) {
		http.Error(w, "Sign in to the dashboard first.", http.StatusUnauthorized)
		return
	}
	text := r.URL.Query().Get("text")
	if len(text) > maxQRText || !(strings.HasPrefix(text, "http://") || strings.HasPrefix(text, "https://")) {
		http.Error(w, "A QR code is made of a link (http or https, at most 2048 bytes).", http.StatusBadRequest)
		return
	}
	svg, err := qrSVG(text)
	if err != nil {
		http.Error(w, "This link is too long for a QR code.", http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Write([]byte(svg))
}

// qrRows encodes text as a QR code, one string of '1' (dark) and '0' per
// row, so any surface can draw it.
func qrRows(text string) ([]string, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return nil, err
	}
	b := code.Bounds()
	rows := make([]string, 0, b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		var sb strings.Builder
		for x := b.Min.X; x < b.Max.X; x++ {
			if dark(code.At(x, y)) {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		rows = append(rows, sb.String())
	}
	return rows, nil
}
