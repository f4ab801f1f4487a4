package main

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"corral/core/docread/doctest"
)

// document_read through the real daemon: `corral serve` parses documents
// by re-running its own executable as `corral __docread` under bubblewrap.
// A zip bomb and a damaged file answer with a sentence, and the daemon
// goes on serving.
func TestMCPDocumentRead(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "http")
	put := func(p string, data []byte) {
		t.Helper()
		if res := callMCP(t, cs, "file_write", map[string]any{"path": p, "content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"}); res.IsError {
			t.Fatalf("file_write %s: %s", p, textOf(t, res))
		}
	}
	put("docs/report.docx", doctest.DOCX([]string{"Quarterly report", "All is well."}, [][]string{{"item", "qty"}, {"pears", "3"}}))
	put("docs/book.xlsx", doctest.XLSX(doctest.Sheet{Name: "Stock", Rows: [][]string{{"item", "qty"}, {"apples", "12"}}}))
	put("docs/bomb.docx", doctest.DOCXBomb(4<<30))
	put("docs/broken.pptx", doctest.PPTX([]string{"x"})[:100])

	res := callMCP(t, cs, "document_read", map[string]any{"path": "docs/report.docx"})
	if text := textOf(t, res); res.IsError || text != "Quarterly report\nAll is well.\nitem\tqty\npears\t3\n" {
		t.Fatalf("report.docx: %v %q", res.IsError, text)
	}
	res = callMCP(t, cs, "document_read", map[string]any{"path": "docs/book.xlsx", "limit": 2})
	if text := textOf(t, res); res.IsError || text != "=== Sheet: Stock ===\nitem\tqty\n\n[Showing lines 1–2 of 3. Call document_read with offset=3 to read on.]" {
		t.Fatalf("book.xlsx, 2 lines: %v %q", res.IsError, text)
	}
	for p, says := range map[string]string{"docs/bomb.docx": "zip bomb", "docs/broken.pptx": "could not be read"} {
		start := time.Now()
		res = callMCP(t, cs, "document_read", map[string]any{"path": p})
		if text := textOf(t, res); !res.IsError || !strings.Contains(text, says) || time.Since(start) > 30*time.Second {
			t.Errorf("%s: isError=%v after %s: %q", p, res.IsError, time.Since(start), text)
		}
	}
	if res := callMCP(t, cs, "document_read", map[string]any{"path": "docs/report.docx", "offset": 2}); res.IsError || !strings.HasPrefix(textOf(t, res), "All is well.\n") {
		t.Fatalf("the daemon after the hostile documents: %v %q", res.IsError, textOf(t, res))
	}
}
