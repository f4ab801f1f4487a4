package docread

import (
	"encoding/xml"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// maxColumns bounds the cells of one spreadsheet row (XLSX's own limit),
// maxRepeat the rows or cells one ODS repeat count may stand for.
const (
	maxColumns = 16384
	maxRepeat  = 16384
)

// docxText reads word/document.xml: paragraphs are lines, table cells are
// separated by tabs.
func docxText(z *zipDoc, w *textWriter) error {
	return z.walkXML("word/document.xml", ooxmlBody(w, "t", "p", "tc", "tr"))
}

// ooxmlBody handles the WordprocessingML and DrawingML text model: text in
// elements named text, paragraphs p, table cells cell and rows row.
func ooxmlBody(w *textWriter, text, para, cell, row string) func(xml.Token) error {
	inText := false
	cells := 0 // depth of table cells: paragraphs there do not end lines
	return func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case text:
				inText = true
			case "tab":
				return w.text("\t")
			case "br", "cr":
				if cells == 0 {
					w.newline()
				} else {
					w.spaceBefore()
				}
			case cell:
				cells++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case text:
				inText = false
			case para:
				if cells == 0 {
					w.newline()
				} else {
					w.spaceBefore()
				}
			case cell:
				cells = max(cells-1, 0)
				w.cellEnd()
			case row:
				w.newline()
			}
		case xml.CharData:
			if inText {
				return w.text(strings.ReplaceAll(string(t), "\n", " "))
			}
		}
		return nil
	}
}

// odtText reads content.xml of an OpenDocument text.
func odtText(z *zipDoc, w *textWriter) error {
	inBody := false
	cells := 0
	skip := 0 // depth inside elements whose text is not content
	return z.walkXML("content.xml", func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if skip > 0 {
				skip++
				return nil
			}
			switch t.Name.Local {
			case "body":
				inBody = true
			case "tracked-changes", "annotation", "notes":
				skip = 1
			case "s":
				n, _ := strconv.Atoi(attr(t, "c"))
				return w.text(strings.Repeat(" ", min(max(n, 1), 64)))
			case "tab":
				return w.text("\t")
			case "line-break":
				w.newline()
			case "table-cell":
				cells++
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				return nil
			}
			switch t.Name.Local {
			case "p", "h":
				if cells == 0 {
					w.newline()
				} else {
					w.spaceBefore()
				}
			case "table-cell":
				cells = max(cells-1, 0)
				w.cellEnd()
			case "table-row":
				w.newline()
			}
		case xml.CharData:
			if inBody && skip == 0 {
				return w.text(strings.ReplaceAll(string(t), "\n", " "))
			}
		}
		return nil
	})
}

// pptxText reads the slides in presentation order.
func pptxText(z *zipDoc, w *textWriter) (int, error) {
	rels, err := z.rels("ppt/_rels/presentation.xml.rels", "ppt")
	if err != nil {
		return 0, err
	}
	var slides []string
	err = z.walkXML("ppt/presentation.xml", func(tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
			if p := rels[attrNS(se, "r", "id")]; p != "" {
				slides = append(slides, p)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for i, s := range slides {
		if err := w.marker(fmt.Sprintf("=== Slide %d ===", i+1)); err != nil {
			return len(slides), err
		}
		if !z.has(s) {
			continue
		}
		if err := z.walkXML(s, ooxmlBody(w, "t", "p", "tc", "tr")); err != nil {
			return len(slides), err
		}
	}
	return len(slides), nil
}

// xlsxText reads every sheet of a workbook as tab-separated rows.
func xlsxText(z *zipDoc, w *textWriter) (int, error) {
	rels, err := z.rels("xl/_rels/workbook.xml.rels", "xl")
	if err != nil {
		return 0, err
	}
	type sheet struct{ name, part string }
	var sheets []sheet
	err = z.walkXML("xl/workbook.xml", func(tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sheet" {
			sheets = append(sheets, sheet{attr(se, "name"), rels[attrNS(se, "r", "id")]})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	shared, err := sharedStrings(z)
	if err != nil {
		return 0, err
	}
	for _, s := range sheets {
		if err := w.marker("=== Sheet: " + oneLine(s.name) + " ==="); err != nil {
			return len(sheets), err
		}
		if s.part == "" || !z.has(s.part) {
			continue
		}
		if err := xlsxSheet(z, s.part, shared, w); err != nil {
			return len(sheets), err
		}
	}
	return len(sheets), nil
}

// sharedStrings reads xl/sharedStrings.xml: each si's text, phonetic runs
// left out.
func sharedStrings(z *zipDoc) ([]string, error) {
	const part = "xl/sharedStrings.xml"
	if !z.has(part) {
		return nil, nil
	}
	var (
		out      []string
		cur      strings.Builder
		inT, rPh bool
	)
	err := z.walkXML(part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				inT = true
			case "rPh":
				rPh = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				out = append(out, cur.String())
			case "t":
				inT = false
			case "rPh":
				rPh = false
			}
		case xml.CharData:
			if inT && !rPh {
				cur.Write(t)
			}
		}
		return nil
	})
	return out, err
}

// xlsxSheet writes one worksheet's rows.
func xlsxSheet(z *zipDoc, part string, shared []string, w *textWriter) error {
	var (
		row      []string
		col      int // next column when a cell has no reference
		ctype    string
		value    strings.Builder
		inValue  bool
		cellCol  int
		haveCell bool
	)
	return z.walkXML(part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				row, col = row[:0], 0
			case "c":
				ctype, haveCell = attr(t, "t"), true
				value.Reset()
				cellCol = col
				if c, ok := columnIndex(attr(t, "r")); ok {
					cellCol = c
				}
			case "v", "t":
				inValue = haveCell
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t":
				inValue = false
			case "c":
				haveCell = false
				v := value.String()
				switch ctype {
				case "s":
					if i, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && i >= 0 && i < len(shared) {
						v = shared[i]
					}
				case "b":
					v = map[string]string{"1": "TRUE", "0": "FALSE"}[strings.TrimSpace(v)]
				}
				if cellCol >= maxColumns {
					return nil
				}
				for len(row) < cellCol {
					row = append(row, "")
				}
				if cellCol < len(row) {
					row[cellCol] = cellText(v)
				} else {
					row = append(row, cellText(v))
				}
				col = cellCol + 1
			case "row":
				if len(row) > 0 {
					if err := w.text(strings.Join(row, "\t")); err != nil {
						return err
					}
					w.newline()
				}
			}
		case xml.CharData:
			if inValue {
				value.Write(t)
			}
		}
		return nil
	})
}

// columnIndex reads the column of a cell reference such as "AB12" (0-based).
func columnIndex(ref string) (int, bool) {
	n, i := 0, 0
	for ; i < len(ref) && i < 4; i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		n = n*26 + int(c-'a'+1)
	}
	if i == 0 {
		return 0, false
	}
	return n - 1, true
}

// cellText makes a cell's value fit one tab-separated field.
func cellText(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// oneLine makes a name fit a marker line.
func oneLine(s string) string { return strings.TrimSpace(cellText(s)) }

// odsText reads an OpenDocument spreadsheet: every table as tab-separated
// rows. Empty rows are left out, and repeated empty cells are written only
// when a value follows them, so the usual million trailing empty rows and
// columns cost nothing.
func odsText(z *zipDoc, w *textWriter) (int, error) {
	var (
		sheets     int
		row        []string
		emptyCells int // pending empty cells in this row
		rowRepeat  int
		cellRepeat int
		cell       strings.Builder
		inCell     bool
		paras      int
		skip       int
	)
	err := z.walkXML("content.xml", func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if skip > 0 {
				skip++
				return nil
			}
			switch t.Name.Local {
			case "annotation":
				skip = 1
			case "table":
				if t.Name.Space != "table" && t.Name.Space != "" {
					return nil
				}
				sheets++
				return w.marker("=== Sheet: " + oneLine(attr(t, "name")) + " ===")
			case "table-row":
				row, emptyCells = row[:0], 0
				rowRepeat = repeat(attr(t, "number-rows-repeated"))
			case "table-cell", "covered-table-cell":
				inCell, paras = true, 0
				cell.Reset()
				cellRepeat = repeat(attr(t, "number-columns-repeated"))
				// A value attribute is the cell's value when its text is absent.
				if v := attr(t, "value"); v != "" && attr(t, "value-type") != "string" {
					cell.WriteString(v)
					paras = -1 // text:p, if any, replaces it
				}
			case "p":
				if inCell {
					if paras == -1 {
						cell.Reset()
						paras = 0
					}
					if paras > 0 {
						cell.WriteByte(' ')
					}
					paras++
				}
			case "s":
				if inCell {
					cell.WriteByte(' ')
				}
			case "tab":
				if inCell {
					cell.WriteByte(' ')
				}
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				return nil
			}
			switch t.Name.Local {
			case "table-cell", "covered-table-cell":
				inCell = false
				v := cellText(cell.String())
				if v == "" {
					emptyCells += cellRepeat
					return nil
				}
				for ; emptyCells > 0 && len(row) < maxColumns; emptyCells-- {
					row = append(row, "")
				}
				emptyCells = 0
				for i := 0; i < cellRepeat && len(row) < maxColumns; i++ {
					row = append(row, v)
				}
			case "table-row":
				if len(row) == 0 {
					return nil // empty rows are left out
				}
				line := strings.Join(row, "\t")
				for range rowRepeat {
					if err := w.text(line); err != nil {
						return err
					}
					w.newline()
				}
			}
		case xml.CharData:
			if inCell && skip == 0 && paras != -1 {
				cell.Write(t)
			}
		}
		return nil
	})
	return sheets, err
}

// repeat reads an ODS repeat count: 1 when absent, at most maxRepeat.
func repeat(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxRepeat)
}

// epubText reads the chapters of an EPUB in spine order.
func epubText(z *zipDoc, w *textWriter) (int, error) {
	var opf string
	err := z.walkXML("META-INF/container.xml", func(tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rootfile" && opf == "" {
			opf = strings.TrimPrefix(path.Clean("/"+attr(se, "full-path")), "/")
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if opf == "" {
		return 0, damaged("it names no content (META-INF/container.xml has no rootfile).")
	}
	dir := path.Dir(opf)
	manifest := map[string]string{}
	var spine []string
	err = z.walkXML(opf, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch se.Name.Local {
		case "item":
			href := attr(se, "href")
			if i := strings.IndexAny(href, "#?"); i >= 0 {
				href = href[:i]
			}
			manifest[attr(se, "id")] = resolvePart(dir, unescapeHref(href))
		case "itemref":
			if attr(se, "linear") != "no" {
				spine = append(spine, attr(se, "idref"))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range spine {
		part := manifest[id]
		if part == "" || !z.has(part) {
			continue
		}
		n++
		if err := w.marker(fmt.Sprintf("=== Chapter %d ===", n)); err != nil {
			return n, err
		}
		rc, err := z.open(part)
		if err != nil {
			return n, err
		}
		err = extractHTML(rc, w)
		rc.Close()
		if err != nil {
			return n, asDocError(err)
		}
	}
	return n, nil
}

// unescapeHref undoes the percent-escapes of an href ("My%20Chapter.xhtml").
func unescapeHref(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
