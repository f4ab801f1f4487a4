package documents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDocumentReadPDF reads a 100-page PDF (50 lines a page) through
// DocumentRead — fsbox, the sandboxed helper (this test binary under
// bubblewrap), the line paging and the audit event — next to poppler's
// pdftotext on the same file. The goal is at least half pdftotext's
// speed.
func BenchmarkDocumentReadPDF(b *testing.B) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		b.Fatal("pdftotext is not installed: run packaging/deps.sh (poppler-utils)")
	}
	pdf := samplePDF(b, 100, 50)
	w := docWorld(b, Config{})
	w.put(b, "book.pdf", pdf)
	file := filepath.Join(b.TempDir(), "book.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	b.Run("corral", func(b *testing.B) {
		b.SetBytes(int64(len(pdf)))
		for b.Loop() {
			res, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "book.pdf"})
			if err != nil || res.Pages != 100 || !strings.Contains(res.Content, "Page 30 line 50") || res.TotalLines < 5000 {
				b.Fatalf("%d pages, %v", res.Pages, err)
			}
		}
	})
	b.Run("pdftotext", func(b *testing.B) {
		b.SetBytes(int64(len(pdf)))
		for b.Loop() {
			out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
			if err != nil || !strings.Contains(string(out), "Page 40 line 50") {
				b.Fatalf("pdftotext: %v", err)
			}
		}
	})
}
