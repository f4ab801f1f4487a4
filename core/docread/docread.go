// Package docread turns documents into plain text: PDF, DOCX, ODT, XLSX,
// ODS, PPTX, EPUB, RTF and HTML. It is pure Go over a byte slice: it opens
// no files, starts no processes and imports no network code. Corral runs it
// only inside a sandboxed helper process (see Serve and core/execbox's
// RunHelper), never in the daemon, because the parsers see hostile bytes.
//
// # Output
//
// Text is UTF-8 with "\n" line ends. Markers on lines of their own separate
// the parts of a document: "=== Page N ===" before each PDF page, "===
// Sheet: NAME ===" before each spreadsheet sheet (rows as tab-separated
// cells), "=== Slide N ===" before each PPTX slide, "=== Chapter N ==="
// before each EPUB spine item. Word-processor paragraphs are lines; table
// cells are separated by tabs, table rows by line ends.
//
// # What is guaranteed
//
//   - Every input, however malformed, ends in a Result or an *Error; a
//     panic inside a parser (the PDF library's error style) is recovered and
//     answered as a damaged document.
//   - Zip containers (DOCX, ODT, XLSX, ODS, PPTX, EPUB) are bounded: at most
//     Limits.MaxEntries entries, and at most Limits.MaxUnpacked bytes
//     inflated in total over every part read, so a zip bomb stops early.
//     XML is read with encoding/xml, which expands no DTD entities.
//   - Output is cut at Limits.MaxText bytes (on a line boundary where one
//     is near), with a final "=== Text cut at N MiB ===" line.
//   - RTF groups nest at most maxRTFDepth deep; HTML is tokenized, never
//     built into a tree.
//
// # What is not guaranteed
//
//   - Memory and CPU time are not bounded here beyond the caps above: a
//     PDF with huge content streams or a pathological page tree can still
//     take long or allocate much. The sandboxed helper's rlimits and
//     timeout are the real bound; this package only keeps honest
//     documents cheap.
//   - Layout is approximate. PDF text comes out in content-stream order
//     with lines broken where the baseline moves, so multi-column pages and
//     tables may interleave; scanned PDFs (images only) give no text;
//     encrypted PDFs are refused. DOCX headers, footers, footnotes and
//     comments, PPTX notes, and formulas of spreadsheets (only their cached
//     values) are left out. Legacy .doc, .xls and .ppt are not read.
//   - Text in encodings other than UTF-8 (HTML with another charset, RTF
//     code pages other than Windows-1252) may come out garbled.
package docread

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Format names a document format, as reported in results.
type Format string

// The formats Extract reads.
const (
	PDF  Format = "pdf"
	DOCX Format = "docx"
	ODT  Format = "odt"
	XLSX Format = "xlsx"
	ODS  Format = "ods"
	PPTX Format = "pptx"
	EPUB Format = "epub"
	RTF  Format = "rtf"
	HTML Format = "html"
)

// Limits bound one extraction. Zero fields take the defaults.
type Limits struct {
	MaxEntries  int   // entries in a zip container; default 10,000
	MaxUnpacked int64 // bytes inflated from a zip container in total; default 256 MiB
	MaxText     int   // bytes of text produced; default 32 MiB
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = 10000
	}
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = 256 << 20
	}
	if l.MaxText <= 0 {
		l.MaxText = 32 << 20
	}
	return l
}

// Result is the text of one document.
type Result struct {
	Format Format
	Text   string
	// Parts counts pages (PDF), sheets (XLSX, ODS), slides (PPTX) or
	// chapters (EPUB); 0 for the other formats.
	Parts int
	Cut   bool // the text was cut at Limits.MaxText
}

// Reasons an extraction fails, the values of Error.Reason.
const (
	Unsupported = "unsupported" // not a format this package reads
	Damaged     = "damaged"     // malformed, truncated or not what its name says
	Encrypted   = "encrypted"   // password-protected
	Bomb        = "bomb"        // unpacks beyond Limits
)

// Error says why a document could not be read, in a sentence for people.
type Error struct {
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func damaged(format string, args ...any) *Error {
	return &Error{Damaged, "The document could not be read: " + fmt.Sprintf(format, args...)}
}

var errLooksDamaged = damaged("it looks damaged.")

// Names lists the supported formats for sentences.
const Names = "PDF, DOCX, ODT, XLSX, ODS, PPTX, EPUB, RTF and HTML"

// Detect names the format of a document from its content, using the file
// name's extension (name may be "") only to choose among zip containers
// whose parts do not say, and for HTML without a recognisable start. It
// answers "" for anything else.
func Detect(name string, data []byte) Format {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	head := data[:min(len(data), 1024)]
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")) || (bytes.Contains(head, []byte("%PDF-")) && ext == "pdf"):
		return PDF
	case bytes.HasPrefix(data, []byte(`{\rtf`)):
		return RTF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return detectZip(ext, data)
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	lower := bytes.ToLower(trimmed[:min(len(trimmed), 512)])
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) ||
		((ext == "html" || ext == "htm" || ext == "xhtml") && bytes.HasPrefix(lower, []byte("<"))) {
		return HTML
	}
	return ""
}

// Extract returns the text of data, a document in format f ("" = Detect
// with no name). Errors are *Error.
func Extract(data []byte, f Format, lim Limits) (res Result, err error) {
	lim = lim.withDefaults()
	if f == "" {
		f = Detect("", data)
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, errLooksDamaged
		}
	}()
	w := &textWriter{max: lim.MaxText}
	var parts int
	switch f {
	case PDF:
		parts, err = extractPDF(data, w)
	case DOCX, ODT, XLSX, ODS, PPTX, EPUB:
		var z *zipDoc
		z, err = openZip(data, lim)
		if err == nil {
			parts, err = extractZip(z, f, w)
		}
	case RTF:
		err = extractRTF(data, w)
	case HTML:
		err = extractHTML(bytes.NewReader(data), w)
	default:
		return Result{}, &Error{Unsupported, "This is not a document Corral can read; it reads " + Names + "."}
	}
	if errors.Is(err, errFull) {
		err = nil
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = errLooksDamaged
		}
		return Result{}, e
	}
	return Result{Format: f, Text: w.finish(), Parts: parts, Cut: w.cut}, nil
}

// errFull stops a walk once the text is full.
var errFull = errors.New("docread: text limit reached")

// textWriter collects text with line-level tidying: no runs of more than
// one blank line, no trailing spaces, at most max bytes.
type textWriter struct {
	b       strings.Builder
	max     int
	cut     bool
	pending int  // line ends owed (1, or 2 for a blank line), written before the next text
	midLine bool // text written since the last line end
	space   bool // a space is owed before the next text on this line
	tabs    int  // cell separators owed before the next text on this line
}

// text writes s, which holds no line ends.
func (w *textWriter) text(s string) error {
	if w.cut {
		return errFull
	}
	if s == "" {
		return nil
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if w.pending > 0 {
		if w.b.Len() > 0 {
			w.b.WriteString("\n\n"[:w.pending])
		}
		w.pending = 0
		w.space = false
	}
	switch {
	case w.tabs > 0:
		w.b.WriteString(strings.Repeat("\t", w.tabs))
	case w.space && w.midLine:
		w.b.WriteByte(' ')
	}
	w.space, w.tabs = false, 0
	if w.b.Len()+len(s) > w.max {
		s = s[:max(0, w.max-w.b.Len())]
		for len(s) > 0 && !utf8.ValidString(s[len(s)-min(len(s), 3):]) {
			s = s[:len(s)-1]
		}
		w.b.WriteString(s)
		w.cut = true
		return errFull
	}
	w.b.WriteString(s)
	w.midLine = true
	return nil
}

// spaceBefore asks for a word gap before the next text on this line.
func (w *textWriter) spaceBefore() { w.space = true }

// cellEnd ends a table cell: a tab goes before the next text on this line,
// and cells left empty at the end of a row leave no trailing tabs.
func (w *textWriter) cellEnd() {
	if w.tabs < maxColumns {
		w.tabs++
	}
}

// newline ends the current line, if one was started.
func (w *textWriter) newline() {
	if w.midLine {
		w.pending = max(w.pending, 1)
		w.midLine = false
	}
	w.space, w.tabs = false, 0
}

// paragraph ends the current line and asks for a blank line before the
// next text.
func (w *textWriter) paragraph() {
	w.newline()
	if w.b.Len() > 0 {
		w.pending = 2
	}
}

// marker writes a line of its own such as "=== Page 3 ===", after a blank
// line.
func (w *textWriter) marker(s string) error {
	w.paragraph()
	if err := w.text(s); err != nil {
		return err
	}
	w.newline()
	return nil
}

// write writes s, which may hold line ends and tabs, keeping its layout.
func (w *textWriter) write(s string) error {
	for {
		line, rest, found := strings.Cut(s, "\n")
		if err := w.text(strings.TrimRight(line, " \r")); err != nil {
			return err
		}
		if !found {
			return nil
		}
		w.newline()
		s = rest
	}
}

func (w *textWriter) finish() string {
	s := w.b.String()
	if w.cut {
		return s + fmt.Sprintf("\n=== Text cut at %d MiB ===\n", w.max>>20)
	}
	if s != "" {
		s += "\n"
	}
	return s
}
