// Package doctest writes small real documents for tests: DOCX, ODT, XLSX,
// ODS, PPTX and EPUB as zip containers built here, RTF and HTML by hand,
// and PDF through Ghostscript's ps2pdf (packaging/deps.sh installs it). It
// is for tests only.
package doctest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// File is one part of a zip container.
type File struct {
	Name string
	Body string
}

// Zip builds a zip container; the first part is stored uncompressed (as
// ODF and EPUB want their mimetype), the others deflated.
func Zip(files ...File) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, f := range files {
		m := zip.Deflate
		if i == 0 {
			m = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: m})
		if err != nil {
			panic(err)
		}
		w.Write([]byte(f.Body))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

const ctypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`

func esc(s string) string { return html.EscapeString(s) }

// DOCX writes paragraphs, then a table of rows (cells) when given.
func DOCX(paras []string, table [][]string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for _, p := range paras {
		fmt.Fprintf(&b, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, esc(p))
	}
	if table != nil {
		b.WriteString(`<w:tbl>`)
		for _, row := range table {
			b.WriteString(`<w:tr>`)
			for _, c := range row {
				fmt.Fprintf(&b, `<w:tc><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:tc>`, esc(c))
			}
			b.WriteString(`</w:tr>`)
		}
		b.WriteString(`</w:tbl>`)
	}
	b.WriteString(`</w:body></w:document>`)
	return Zip(File{"[Content_Types].xml", ctypes}, File{"word/document.xml", b.String()})
}

// ODT writes a heading and paragraphs.
func ODT(heading string, paras []string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>`)
	fmt.Fprintf(&b, `<text:h text:outline-level="1">%s</text:h>`, esc(heading))
	for _, p := range paras {
		fmt.Fprintf(&b, `<text:p>%s</text:p>`, esc(p))
	}
	b.WriteString(`</office:text></office:body></office:document-content>`)
	return Zip(File{"mimetype", "application/vnd.oasis.opendocument.text"}, File{"content.xml", b.String()})
}

// Sheet is a named sheet of rows.
type Sheet struct {
	Name string
	Rows [][]string
}

func colName(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// XLSX writes sheets; cells that parse as numbers are numbers, the rest
// shared strings.
func XLSX(sheets ...Sheet) []byte {
	var shared []string
	index := map[string]int{}
	files := []File{{"[Content_Types].xml", ctypes}}
	var wb, rels strings.Builder
	wb.WriteString(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>`)
	rels.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for i, s := range sheets {
		fmt.Fprintf(&wb, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, esc(s.Name), i+1, i+1)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, i+1, i+1)
		var sb strings.Builder
		sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
		for r, row := range s.Rows {
			fmt.Fprintf(&sb, `<row r="%d">`, r+1)
			for c, v := range row {
				if v == "" {
					continue
				}
				ref := fmt.Sprintf("%s%d", colName(c), r+1)
				var f float64
				if _, err := fmt.Sscanf(v, "%g", &f); err == nil && fmt.Sprint(f) == v {
					fmt.Fprintf(&sb, `<c r="%s"><v>%s</v></c>`, ref, v)
					continue
				}
				k, ok := index[v]
				if !ok {
					k = len(shared)
					index[v] = k
					shared = append(shared, v)
				}
				fmt.Fprintf(&sb, `<c r="%s" t="s"><v>%d</v></c>`, ref, k)
			}
			sb.WriteString(`</row>`)
		}
		sb.WriteString(`</sheetData></worksheet>`)
		files = append(files, File{fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), sb.String()})
	}
	wb.WriteString(`</sheets></workbook>`)
	rels.WriteString(`</Relationships>`)
	var ss strings.Builder
	ss.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`)
	for _, s := range shared {
		fmt.Fprintf(&ss, `<si><t>%s</t></si>`, esc(s))
	}
	ss.WriteString(`</sst>`)
	files = append(files, File{"xl/workbook.xml", wb.String()}, File{"xl/_rels/workbook.xml.rels", rels.String()}, File{"xl/sharedStrings.xml", ss.String()})
	return Zip(files...)
}

// ODS writes sheets, ending each with the million repeated empty rows
// office suites write.
func ODS(sheets ...Sheet) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet>`)
	for _, s := range sheets {
		fmt.Fprintf(&b, `<table:table table:name="%s">`, esc(s.Name))
		for _, row := range s.Rows {
			b.WriteString(`<table:table-row>`)
			for _, v := range row {
				if v == "" {
					b.WriteString(`<table:table-cell/>`)
					continue
				}
				fmt.Fprintf(&b, `<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`, esc(v))
			}
			b.WriteString(`<table:table-cell table:number-columns-repeated="1020"/></table:table-row>`)
		}
		b.WriteString(`<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>`)
	}
	b.WriteString(`</office:spreadsheet></office:body></office:document-content>`)
	return Zip(File{"mimetype", "application/vnd.oasis.opendocument.spreadsheet"}, File{"content.xml", b.String()})
}

// PPTX writes slides, each a list of paragraphs. The relationship ids run
// backwards, so only a reader that follows them gets the order right.
func PPTX(slides ...[]string) []byte {
	files := []File{{"[Content_Types].xml", ctypes}}
	var pres, rels strings.Builder
	pres.WriteString(`<?xml version="1.0" encoding="UTF-8"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst>`)
	rels.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	n := len(slides)
	for i, paras := range slides {
		fmt.Fprintf(&pres, `<p:sldId id="%d" r:id="rId%d"/>`, 256+i, n-i)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide%d.xml"/>`, n-i, n-i)
		var s strings.Builder
		s.WriteString(`<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody>`)
		for _, p := range paras {
			fmt.Fprintf(&s, `<a:p><a:r><a:t>%s</a:t></a:r></a:p>`, esc(p))
		}
		s.WriteString(`</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`)
		files = append(files, File{fmt.Sprintf("ppt/slides/slide%d.xml", n-i), s.String()})
	}
	pres.WriteString(`</p:sldIdLst></p:presentation>`)
	rels.WriteString(`</Relationships>`)
	files = append(files, File{"ppt/presentation.xml", pres.String()}, File{"ppt/_rels/presentation.xml.rels", rels.String()})
	return Zip(files...)
}

// EPUB writes chapters (HTML bodies) whose manifest lists them in reverse,
// so only the spine gives the order.
func EPUB(chapters ...string) []byte {
	files := []File{
		{"mimetype", "application/epub+zip"},
		{"META-INF/container.xml", `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`},
	}
	var manifest, spine strings.Builder
	for i := len(chapters) - 1; i >= 0; i-- {
		fmt.Fprintf(&manifest, `<item id="c%d" href="text/ch%d.xhtml" media-type="application/xhtml+xml"/>`, i, i)
	}
	for i, c := range chapters {
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, i)
		files = append(files, File{fmt.Sprintf("OEBPS/text/ch%d.xhtml", i), `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>ignored title</title><style>p{}</style></head><body>` + c + `</body></html>`})
	}
	files = append(files, File{"OEBPS/content.opf", `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>` + manifest.String() + `</manifest><spine>` + spine.String() + `</spine></package>`})
	return Zip(files...)
}

// RTF is a hand-written RTF document with a font table, a Unicode escape
// (é), a Windows-1252 escape (’) and two paragraphs.
const RTF = `{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Helvetica;}}{\colortbl;\red255\green0\blue0;}
{\*\generator Hand 1.0;}\f0\fs24 Caf\u233?s and tea\'92s\par
Second {\b bold} paragraph\tab end\par
}`

// HTML is a hand-written page with a script, a style and a table.
const HTML = `<!DOCTYPE html><html><head><title>T</title><style>body{color:red}</style><script>var secret = "not text";</script></head>
<body><h1>Heading &amp; more</h1><p>First   paragraph
wraps.</p><table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table><ul><li>one</li><li>two</li></ul></body></html>`

// DOCXBomb is a DOCX whose document.xml inflates to about size bytes of
// repeated text (a zip bomb when size is large), at about 1/1000 of size
// on disk. The deflate stream is built from one compressed megabyte
// repeated, so even gigabytes take milliseconds to make.
func DOCXBomb(size int64) []byte {
	const mib = 1 << 20
	prefix := []byte(`<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>`)
	suffix := []byte(`</w:t></w:r></w:p></w:body></w:document>`)
	chunk := bytes.Repeat([]byte("A"), mib)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(prefix)
	fw.Write(chunk)
	fw.Flush()
	first := bytes.Clone(comp.Bytes())
	comp.Reset()
	fw.Write(chunk)
	fw.Flush()
	repeated := bytes.Clone(comp.Bytes()) // refers only to the A's before it
	comp.Reset()
	fw.Write(suffix)
	fw.Close()
	last := comp.Bytes()

	n := max(size/mib, 2)
	crc := crc32.Update(0, crc32.IEEETable, prefix)
	var stream bytes.Buffer
	stream.Write(first)
	for i := int64(0); i < n; i++ {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
		if i > 0 {
			stream.Write(repeated)
		}
	}
	crc = crc32.Update(crc, crc32.IEEETable, suffix)
	stream.Write(last)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("[Content_Types].xml")
	w.Write([]byte(ctypes))
	w, _ = zw.CreateRaw(&zip.FileHeader{
		Name: "word/document.xml", Method: zip.Deflate, CRC32: crc,
		CompressedSize64:   uint64(stream.Len()),
		UncompressedSize64: uint64(int64(len(prefix)+len(suffix)) + n*mib),
	})
	w.Write(stream.Bytes())
	zw.Close()
	return buf.Bytes()
}

// PDF renders pages of lines with Ghostscript's ps2pdf into a PDF. It
// needs ps2pdf on PATH (the ghostscript package).
func PDF(dir string, pages [][]string) ([]byte, error) {
	var ps strings.Builder
	ps.WriteString("%!PS-Adobe-3.0\n/Helvetica findfont 11 scalefont setfont\n")
	for _, lines := range pages {
		y := 760
		for _, l := range lines {
			fmt.Fprintf(&ps, "50 %d moveto (%s) show\n", y, psEscape(l))
			y -= 14
		}
		ps.WriteString("showpage\n")
	}
	in := filepath.Join(dir, "in.ps")
	out := filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, []byte(ps.String()), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("ps2pdf", in, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ps2pdf: %v: %s", err, b)
	}
	return os.ReadFile(out)
}

func psEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}
