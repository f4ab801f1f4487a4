package docread

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"corral/core/docread/doctest"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want Format
	}{
		{"a.pdf", []byte("%PDF-1.7\n"), PDF},
		{"renamed.txt", []byte("%PDF-1.4\n"), PDF},
		{"a.docx", doctest.DOCX([]string{"x"}, nil), DOCX},
		{"no-extension", doctest.XLSX(doctest.Sheet{Name: "s"}), XLSX},
		{"a.zip", doctest.PPTX([]string{"x"}), PPTX},
		{"a.bin", doctest.ODT("h", nil), ODT},
		{"a.bin", doctest.ODS(), ODS},
		{"a.bin", doctest.EPUB("<p>x</p>"), EPUB},
		{"x", []byte(`{\rtf1 hi}`), RTF},
		{"x", []byte("\xef\xbb\xbf  <!DOCTYPE html><p>x"), HTML},
		{"page.htm", []byte("<p>x</p>"), HTML},
		{"notes.txt", []byte("<p>x</p>"), ""},
		{"a.docx", []byte("PK\x03\x04 not really a zip"), DOCX}, // by name; reading it then fails
		{"a.txt", []byte("hello"), ""},
		{"a.doc", []byte("\xd0\xcf\x11\xe0legacy"), ""},
	} {
		if got := Detect(tc.name, tc.data); got != tc.want {
			t.Errorf("Detect(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return fmt.Sprintf("not an *Error: %v", err)
}

// A zip container may not spend more than MaxUnpacked inflating, whatever
// its parts declare, nor hold more than MaxEntries parts.
//
// The bomb is 4 MiB, four times each bound: enough to tell a bounded
// reader from one that is not. (At 64 MiB the one <w:t> run took half a
// minute under -race: the XML decoder holds a whole run of text before
// the text cap sees it, and only MaxUnpacked bounds that.)
func TestZipBounds(t *testing.T) {
	bomb := doctest.DOCXBomb(4 << 20)
	if _, err := Extract(bomb, DOCX, Limits{MaxUnpacked: 1 << 20}); reason(err) != Bomb {
		t.Errorf("4 MiB part, 1 MiB budget: %v", err)
	}
	res, err := Extract(bomb, DOCX, Limits{MaxText: 1 << 20})
	if err != nil || !res.Cut || !strings.HasSuffix(res.Text, "=== Text cut at 1 MiB ===\n") || len(res.Text) > 1<<20+64 {
		t.Errorf("4 MiB of text, 1 MiB cap: cut=%v len=%d err=%v", res.Cut, len(res.Text), err)
	}

	// Parts that lie about their size small: archive/zip and the budget
	// both stop them.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("word/document.xml")
	w.Write([]byte("<w:t>" + strings.Repeat("x", 64<<10) + "</w:t>"))
	zw.Close()
	data := buf.Bytes()
	// Patch the central directory's uncompressed size (offset 24 in the
	// central header) to claim 100 bytes.
	cd := bytes.LastIndex(data, []byte("PK\x01\x02"))
	copy(data[cd+24:], []byte{100, 0, 0, 0})
	if _, err := Extract(data, DOCX, Limits{}); reason(err) != Damaged {
		t.Errorf("a part larger than declared: %v", err)
	}

	var files []doctest.File
	for i := range 50 {
		files = append(files, doctest.File{Name: fmt.Sprintf("f%d", i), Body: "x"})
	}
	if _, err := Extract(doctest.Zip(files...), DOCX, Limits{MaxEntries: 20}); reason(err) != Bomb {
		t.Errorf("50 parts, at most 20: %v", err)
	}
}

func TestDamaged(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		f    Format
	}{
		{"empty pdf", []byte("%PDF-1.4\n"), PDF},
		{"docx without document.xml", doctest.Zip(doctest.File{Name: "[Content_Types].xml", Body: "<Types/>"}), DOCX},
		{"xlsx without workbook", doctest.Zip(doctest.File{Name: "x", Body: "y"}), XLSX},
		{"epub without rootfile", doctest.Zip(doctest.File{Name: "mimetype", Body: "application/epub+zip"}, doctest.File{Name: "META-INF/container.xml", Body: "<container/>"}), EPUB},
		{"truncated zip", doctest.ODT("x", nil)[:60], ODT},
		{"rtf nesting", []byte(`{\rtf1` + strings.Repeat("{", maxRTFDepth+1)), RTF},
	} {
		if _, err := Extract(tc.data, tc.f, Limits{}); reason(err) != Damaged {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := Extract([]byte("plain"), "", Limits{}); reason(err) != Unsupported {
		t.Errorf("plain text: %v", err)
	}
}

func TestRTF(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{doctest.RTF, "Cafés and tea’s\nSecond bold paragraph\tend\n"},
		{`{\rtf1 a\u-3913?b}`, "a\uf0b7b\n"},                                   // negative \u
		{`{\rtf1\uc2 \u8364 XXc\uc0 \u8364 d}`, "€c€d\n"},                      // \ucN fallbacks skipped
		{`{\rtf1 \u55357 ?\u56832 ?!}`, "😀!\n"},                                // a surrogate pair
		{`{\rtf1 {\*\unknown hidden}{\pict 0a0b}shown\bin3 {}xy}`, "showny\n"}, // skipped destinations, \bin data
		{`{\rtf1 \{braces\}\\ and\~nbsp\line next}`, "{braces}\\ and\u00a0nbsp\nnext\n"},
		{`{\rtf1 trailing} garbage after the end`, "trailing\n"},
	} {
		res, err := Extract([]byte(tc.in), RTF, Limits{})
		if err != nil || res.Text != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, res.Text, err, tc.want)
		}
	}
}

// checkText is what every extraction must give: valid UTF-8 within the cap.
func checkText(t *testing.T, s string, max int) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8: %q", s)
	}
	if len(s) > max+64 {
		t.Fatalf("%d bytes, cap %d", len(s), max)
	}
}

// The hand-written parsers run here without Extract's recover, so a panic
// in them fails the fuzzer.
func FuzzRTF(f *testing.F) {
	f.Add([]byte(doctest.RTF))
	f.Add([]byte(`{\rtf1 \u-1?\'e9\'\bin99999 {\*\x}\uc9999 \u55357 }`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &textWriter{max: 4096}
		err := extractRTF(data, w)
		var e *Error
		if err != nil && !errors.As(err, &e) && !errors.Is(err, errFull) {
			t.Fatalf("error of no kind: %v", err)
		}
		checkText(t, w.finish(), 4096)
	})
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte(doctest.HTML))
	f.Add([]byte("<table><td><pre>a\n<script>x</pre></td><img alt='&#0;'><li>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &textWriter{max: 4096}
		if err := extractHTML(bytes.NewReader(data), w); err != nil && !errors.Is(err, errFull) {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of no kind: %v", err)
			}
		}
		checkText(t, w.finish(), 4096)
	})
}

// FuzzZip feeds the zip and XML walkers of every container format.
func FuzzZip(f *testing.F) {
	f.Add(doctest.DOCX([]string{"a", "b"}, [][]string{{"c", "d"}}))
	f.Add(doctest.ODT("h", []string{"p"}))
	f.Add(doctest.XLSX(doctest.Sheet{Name: "s", Rows: [][]string{{"1", "x"}}}))
	f.Add(doctest.ODS(doctest.Sheet{Name: "s", Rows: [][]string{{"a", "", "b"}}}))
	f.Add(doctest.PPTX([]string{"a"}, []string{"b"}))
	f.Add(doctest.EPUB("<p>a</p>", "<p>b</p>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
		}()
		for _, format := range []Format{DOCX, ODT, XLSX, ODS, PPTX, EPUB} {
			z, err := openZip(data, Limits{MaxEntries: 100, MaxUnpacked: 1 << 20})
			if err != nil {
				return
			}
			w := &textWriter{max: 4096}
			_, err = extractZip(z, format, w)
			var e *Error
			if err != nil && !errors.As(err, &e) && !errors.Is(err, errFull) {
				t.Fatalf("%s: error of no kind: %v", format, err)
			}
			checkText(t, w.finish(), 4096)
		}
	})
}
