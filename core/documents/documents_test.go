package documents

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/docread"
	"corral/core/docread/doctest"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
	"corral/core/sandbox"
	"corral/core/sandbox/sandboxtest"
	"corral/core/testkit/needs"
)

// docHelperEnv makes this test binary play Corral's document helper
// (`corral __docread`): RunHelper starts it inside bubblewrap with the
// variable set, and it parses stdin instead of running tests.
const docHelperEnv = "CORRAL_TEST_DOCREAD_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(docHelperEnv) == "1" {
		os.Exit(docread.Serve(os.Args[len(os.Args)-1], os.Stdin, os.Stdout, docread.Limits{}))
	}
	os.Exit(m.Run())
}

// world is a sandbox over a temporary folder (sandboxtest.World) and its
// document service.
type world struct {
	*sandboxtest.World
	svc *Service
}

var alice = sandboxtest.Alice

// newWorldWith makes a world whose documents are read as dc says.
func newWorldWith(t testing.TB, dc Config) *world {
	t.Helper()
	w := sandboxtest.New(t, nil)
	return &world{World: w, svc: New(w.Box, dc)}
}

// docWorld is a world whose sandbox reads documents with this test binary
// as the helper.
func docWorld(t testing.TB, dc Config) *world {
	t.Helper()
	needs.Tool(t, "bwrap", "bubblewrap")
	w := sandboxtest.New(t, nil)
	if dc.Runner == nil {
		r, err := execbox.NewRunner(execbox.Options{Hidden: []string{w.Private}, NetInit: execboxtest.NetInit(t)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, why := r.Available(); !ok {
			t.Fatalf("sandbox unavailable: %s", why)
		}
		dc.Runner = r
	}
	if dc.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		// Built with -race, the helper would sleep a second at exit
		// (GORACE atexit_sleep_ms, default 1000) for goroutines to
		// report races: a second per document read, in a helper that
		// has no other goroutines. It still reports any race it sees.
		dc.Binary, dc.Env = exe, map[string]string{docHelperEnv: "1", "GORACE": "atexit_sleep_ms=0"}
	}
	return &world{World: w, svc: New(w.Box, dc)}
}

func (w *world) put(t testing.TB, p string, data []byte) {
	t.Helper()
	_, err := w.Box.Write(context.Background(), alice, sandbox.WriteArgs{Path: p, Content: base64.StdEncoding.EncodeToString(data), Encoding: "base64"})
	if err != nil {
		t.Fatal(err)
	}
}

func samplePDF(t testing.TB, pages, lines int) []byte {
	t.Helper()
	needs.Tool(t, "ps2pdf", "ghostscript")
	var pp [][]string
	for p := 1; p <= pages; p++ {
		var ls []string
		for l := 1; l <= lines; l++ {
			ls = append(ls, fmt.Sprintf("Page %d line %d: the quick brown fox jumps over the lazy dog.", p, l))
		}
		pp = append(pp, ls)
	}
	b, err := doctest.PDF(t.TempDir(), pp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every format comes out as text with its markers, in document order.
func TestDocumentReadFormats(t *testing.T) {
	t.Parallel() // its own world: folders, sink, runner
	w := docWorld(t, Config{})
	docs := []struct {
		name   string
		data   []byte
		format string
		pages  int
		want   []string // in this order
	}{
		{"a.pdf", samplePDF(t, 2, 2), "pdf", 2, []string{"=== Page 1 ===", "Page 1 line 1: the quick brown fox jumps over the lazy dog.\nPage 1 line 2", "=== Page 2 ===", "Page 2 line 2"}},
		{"a.docx", doctest.DOCX([]string{"Hello from Word", "Second paragraph"}, [][]string{{"name", "qty"}, {"pears", "3"}}), "docx", 0, []string{"Hello from Word\nSecond paragraph\n", "name\tqty\npears\t3\n"}},
		{"a.odt", doctest.ODT("Title", []string{"Writer text"}), "odt", 0, []string{"Title\nWriter text\n"}},
		{"book.xlsx", doctest.XLSX(doctest.Sheet{Name: "Fruit", Rows: [][]string{{"name", "qty"}, {"apples", "12"}, {"", "7"}}}, doctest.Sheet{Name: "Empty sheet"}), "xlsx", 2, []string{"=== Sheet: Fruit ===\nname\tqty\napples\t12\n\t7\n", "=== Sheet: Empty sheet ==="}},
		{"book.ods", doctest.ODS(doctest.Sheet{Name: "Calc", Rows: [][]string{{"a", "", "c"}}}), "ods", 1, []string{"=== Sheet: Calc ===\na\t\tc\n"}},
		{"deck.pptx", doctest.PPTX([]string{"First slide"}, []string{"Second slide", "a bullet"}), "pptx", 2, []string{"=== Slide 1 ===\nFirst slide\n", "=== Slide 2 ===\nSecond slide\na bullet\n"}},
		{"book.epub", doctest.EPUB("<h1>Chapter One</h1><p>It begins.</p>", "<p>It ends.</p>"), "epub", 2, []string{"=== Chapter 1 ===\nChapter One\n\nIt begins.", "=== Chapter 2 ===\nIt ends."}},
		{"letter.rtf", []byte(doctest.RTF), "rtf", 0, []string{"Cafés and tea’s\nSecond bold paragraph\tend\n"}},
		{"page.html", []byte(doctest.HTML), "html", 0, []string{"Heading & more\n\nFirst paragraph wraps.\n", "a\tb\nc\td\n", "- one\n- two"}},
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			w.put(t, "docs/"+d.name, d.data)
			res, err := w.svc.DocumentRead(context.Background(), alice, DocumentReadArgs{Path: "docs/" + d.name})
			if err != nil {
				t.Fatal(err)
			}
			if res.Type != "document" || res.Format != d.format || res.Pages != d.pages || res.Path != "docs/"+d.name || res.Truncated {
				t.Errorf("result %+v", res)
			}
			rest := res.Content
			for _, s := range d.want {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("%q missing (or out of order) in:\n%s", s, res.Content)
				}
				rest = rest[i+len(s):]
			}
			if strings.Contains(res.Content, "not text") || strings.Contains(res.Content, "ignored title") {
				t.Errorf("script or head text leaked: %q", res.Content)
			}
			if res.TotalLines != strings.Count(res.Content, "\n") || res.OutputLines != res.TotalLines {
				t.Errorf("lines %d/%d for %q", res.OutputLines, res.TotalLines, res.Content)
			}
			ev := w.Sink.Last()
			if ev.Op != "file.document_read" || ev.Target != "docs/"+d.name || ev.Bytes != int64(len(d.data)) || !strings.Contains(ev.Detail, d.format) {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

// offset and limit page through the text like file.read pages a file.
func TestDocumentReadPaging(t *testing.T) {
	t.Parallel() // its own world: folders, sink, runner
	w := docWorld(t, Config{})
	w.put(t, "long.pdf", samplePDF(t, 3, 40))
	ctx := context.Background()
	all, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "long.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(all.Content, "\n")
	lines = lines[:len(lines)-1]
	if all.TotalLines != len(lines) || all.TotalLines < 120 || all.Truncated || all.TruncatedBy != nil {
		t.Fatalf("whole text: %d lines, %+v", len(lines), all)
	}
	part, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "long.pdf", Offset: 10, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if part.Content != strings.Join(lines[9:14], "") || part.OutputLines != 5 || !part.Truncated || part.TruncatedBy == nil || *part.TruncatedBy != "lines" || part.TotalLines != all.TotalLines {
		t.Errorf("lines 10-14: %+v", part)
	}
	last, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "long.pdf", Offset: all.TotalLines, Limit: 5})
	if err != nil || last.OutputLines != 1 || last.Truncated {
		t.Errorf("last line: %+v %v", last, err)
	}
	_, err = w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "long.pdf", Offset: all.TotalLines + 1})
	if errs.KindOf(err) != errs.InvalidParams {
		t.Errorf("offset past the end: %v", err)
	}
}

func TestPageLinesByteCap(t *testing.T) {
	line := strings.Repeat("é", 100<<10) + "\n" // 200 KiB
	res, err := pageLines("d.docx", line+line+"end\n", 0, 0)
	if err != nil || res.OutputLines != 1 || res.Content != line || res.TruncatedBy == nil || *res.TruncatedBy != "bytes" || res.TotalLines != 3 {
		t.Fatalf("two 200 KiB lines: %d lines, truncated %v, %v", res.OutputLines, res.TruncatedBy, err)
	}
	huge := strings.Repeat("é", 200<<10)
	res, _ = pageLines("d.docx", huge, 0, 0)
	if len(res.Content) > 256<<10 || !strings.HasPrefix(huge, res.Content) || !res.Truncated {
		t.Fatalf("one 400 KiB line: %d bytes, truncated %v", len(res.Content), res.Truncated)
	}
}

// Hostile and broken documents answer with the right kind, within their
// limits, and the daemon goes on reading good ones.
func TestDocumentReadHostile(t *testing.T) {
	t.Parallel() // its own world: folders, sink, runner
	w := docWorld(t, Config{})
	ctx := context.Background()
	good := samplePDF(t, 1, 3)
	bomb := doctest.DOCXBomb(4 << 30)
	t.Logf("zip bomb: %d bytes on disk, 4 GiB inflated", len(bomb))
	for _, tc := range []struct {
		name string
		data []byte
		kind errs.Kind
		says string
	}{
		{"truncated.pdf", good[:len(good)/2], errs.IO, "The document could not be read"},
		{"garbage.pdf", append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("1 0 obj << /Type /Pages /Kids [1 0 R] >> endobj\n"), 1000)...), errs.IO, "The document could not be read"},
		{"broken.docx", doctest.DOCX([]string{"x"}, nil)[:200], errs.IO, "The document could not be read"},
		{"bad-xml.docx", doctest.Zip(doctest.File{Name: "[Content_Types].xml", Body: "<Types/>"}, doctest.File{Name: "word/document.xml", Body: "<w:document><w:body><w:p"}), errs.IO, "damaged"},
		{"bomb.docx", bomb, errs.IO, "zip bomb"},
		{"notes.txt", []byte("just text\n"), errs.InvalidParams, "not a document Corral can read"},
		{"deep.rtf", []byte(`{\rtf1` + strings.Repeat("{", 100000)), errs.IO, "nest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.put(t, tc.name, tc.data)
			start := time.Now()
			_, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: tc.name})
			if errs.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v (kind %q), want kind %q saying %q", err, errs.KindOf(err), tc.kind, tc.says)
			}
			if d := time.Since(start); d > docTimeout {
				t.Errorf("answered after %s", d)
			}
			if ev := w.Sink.Last(); ev.Op != "file.document_read" || ev.Target != tc.name || ev.Error == "" {
				t.Errorf("event %+v", ev)
			}
		})
	}
	w.put(t, "good.pdf", good)
	if res, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: "good.pdf"}); err != nil || !strings.Contains(res.Content, "Page 1 line 3") {
		t.Fatalf("a good document after the hostile ones: %+v %v", res, err)
	}
}

// Paths resolve as for file.read; files too large are not read at all.
func TestDocumentReadPaths(t *testing.T) {
	t.Parallel() // its own world: folders, sink, runner
	w := docWorld(t, Config{})
	ctx := context.Background()
	w.put(t, "small.pdf", []byte("%PDF-1.4"))
	big := filepath.Join(w.Dir, "base", "alice", "big.pdf")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxDocumentBytes + 1)
	f.Close()
	for _, tc := range []struct {
		path string
		kind errs.Kind
	}{
		{"missing.pdf", errs.NotFound},
		{"big.pdf", errs.TooLarge},
		{"../bob/x.pdf", errs.Denied},
		{filepath.Join(w.Outside, "f.txt"), errs.Denied}, // strict, nobody to ask
		{".", errs.IsDirectory},
	} {
		_, err := w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: tc.path})
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.path, err, tc.kind)
		}
		if ev := w.Sink.Last(); ev.Op != "file.document_read" {
			t.Errorf("%s: event %+v", tc.path, ev)
		}
	}
	_, err = w.svc.DocumentRead(ctx, alice, DocumentReadArgs{Path: filepath.Join(w.RoRoot, "f.txt")})
	if errs.KindOf(err) != errs.InvalidParams {
		t.Errorf("a read-only root is readable (a text file there is no document): %v", err)
	}
}

func TestDocumentReadTimeout(t *testing.T) {
	w := docWorld(t, Config{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 60", "sh"}, Timeout: 300 * time.Millisecond})
	w.put(t, "slow.pdf", []byte("%PDF-1.4"))
	start := time.Now()
	_, err := w.svc.DocumentRead(context.Background(), alice, DocumentReadArgs{Path: "slow.pdf"})
	if errs.KindOf(err) != errs.Timeout || time.Since(start) > 20*time.Second {
		t.Fatalf("slow helper: %v after %s", err, time.Since(start))
	}
}

func TestDocumentReadUnavailable(t *testing.T) {
	r, err := execbox.NewRunner(execbox.Options{Bwrap: "/nonexistent/bwrap"})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorldWith(t, Config{Runner: r, Binary: "/bin/true"})
	w.put(t, "a.pdf", []byte("%PDF-1.4"))
	_, err = w.svc.DocumentRead(context.Background(), alice, DocumentReadArgs{Path: "a.pdf"})
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "bubblewrap") {
		t.Fatalf("without bubblewrap: %v", err)
	}
	if ev := w.Sink.Last(); ev.Op != "file.document_read" || ev.Error == "" {
		t.Errorf("event %+v", ev)
	}
}
