package docread

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// zipDoc is a zip container read under Limits: entries counted once, and
// every byte inflated from any part counted against one budget.
type zipDoc struct {
	files  map[string]*zip.File
	budget int64 // bytes still allowed to inflate
	limit  int64
}

var errBomb = &Error{Bomb, "The document could not be read: it unpacks to far more data than a document of its size should (it may be a zip bomb)."}

func openZip(data []byte, lim Limits) (*zipDoc, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, errLooksDamaged
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, &Error{Bomb, fmt.Sprintf("The document could not be read: it holds more than %d parts.", lim.MaxEntries)}
	}
	z := &zipDoc{files: make(map[string]*zip.File, len(zr.File)), budget: lim.MaxUnpacked, limit: lim.MaxUnpacked}
	for _, f := range zr.File {
		z.files[strings.TrimPrefix(f.Name, "/")] = f
	}
	return z, nil
}

// has reports whether the container holds the part name.
func (z *zipDoc) has(name string) bool { return z.files[name] != nil }

// open opens a part for reading; the reader fails with errBomb once the
// container's budget is spent. A missing part is a damaged document.
func (z *zipDoc) open(name string) (io.ReadCloser, error) {
	f := z.files[name]
	if f == nil {
		return nil, damaged("a part it needs (%s) is missing.", path.Base(name))
	}
	// archive/zip fails a part that inflates beyond its declared size, so
	// the declared size is a bound: a bomb is refused before inflating.
	if f.UncompressedSize64 > uint64(max(z.budget, 0)) {
		return nil, errBomb
	}
	rc, err := f.Open()
	if err != nil {
		return nil, errLooksDamaged
	}
	return &budgetReader{rc: rc, z: z}, nil
}

// read reads a whole (small) part.
func (z *zipDoc) read(name string) ([]byte, error) {
	rc, err := z.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, asDocError(err)
	}
	return b, nil
}

type budgetReader struct {
	rc io.ReadCloser
	z  *zipDoc
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.z.budget <= 0 {
		return 0, errBomb
	}
	if int64(len(p)) > b.z.budget {
		p = p[:b.z.budget]
	}
	n, err := b.rc.Read(p)
	b.z.budget -= int64(n)
	if err != nil && err != io.EOF {
		err = errLooksDamaged
	}
	return n, err
}

func (b *budgetReader) Close() error { return b.rc.Close() }

// asDocError keeps an *Error (errBomb, errFull) and turns anything else
// (an XML syntax error, a bad checksum) into a damaged document.
func asDocError(err error) error {
	var e *Error
	if errors.As(err, &e) || errors.Is(err, errFull) {
		return err
	}
	return errLooksDamaged
}

// walkXML reads the XML part name token by token. fn sees start and end
// elements and character data; it may return errFull to stop.
func (z *zipDoc) walkXML(name string, fn func(tok xml.Token) error) error {
	rc, err := z.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	return walkXML(rc, fn)
}

func walkXML(r io.Reader, fn func(tok xml.Token) error) error {
	d := xml.NewDecoder(r)
	d.Strict = false // tolerate unknown entities; nothing is expanded
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return asDocError(err)
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// attr returns the value of the attribute with the given local name
// (prefix ignored).
func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// attrNS returns the value of the attribute prefix:local.
func attrNS(se xml.StartElement, prefix, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local && a.Name.Space == prefix {
			return a.Value
		}
	}
	return ""
}

// detectZip names a zip container's format from its parts, falling back
// to the extension.
func detectZip(ext string, data []byte) Format {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fallbackZip(ext)
	}
	names := map[string]*zip.File{}
	for i, f := range zr.File {
		if i > 100000 {
			break
		}
		names[f.Name] = f
	}
	if f := names["mimetype"]; f != nil && f.UncompressedSize64 < 256 {
		if rc, err := f.Open(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, 256))
			rc.Close()
			switch strings.TrimSpace(string(b)) {
			case "application/vnd.oasis.opendocument.text":
				return ODT
			case "application/vnd.oasis.opendocument.spreadsheet":
				return ODS
			case "application/epub+zip":
				return EPUB
			}
		}
	}
	switch {
	case names["word/document.xml"] != nil:
		return DOCX
	case names["xl/workbook.xml"] != nil:
		return XLSX
	case names["ppt/presentation.xml"] != nil:
		return PPTX
	case names["META-INF/container.xml"] != nil:
		return EPUB
	}
	return fallbackZip(ext)
}

func fallbackZip(ext string) Format {
	switch f := Format(ext); f {
	case DOCX, ODT, XLSX, ODS, PPTX, EPUB:
		return f
	}
	return ""
}

func extractZip(z *zipDoc, f Format, w *textWriter) (int, error) {
	switch f {
	case DOCX:
		return 0, docxText(z, w)
	case ODT:
		return 0, odtText(z, w)
	case XLSX:
		return xlsxText(z, w)
	case ODS:
		return odsText(z, w)
	case PPTX:
		return pptxText(z, w)
	case EPUB:
		return epubText(z, w)
	}
	return 0, errLooksDamaged
}

// rels reads an OOXML relationships part: Id → target part name, resolved
// against the folder of the part the relationships belong to.
func (z *zipDoc) rels(relsPart, baseDir string) (map[string]string, error) {
	out := map[string]string{}
	if !z.has(relsPart) {
		return out, nil
	}
	err := z.walkXML(relsPart, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Relationship" || attr(se, "TargetMode") == "External" {
			return nil
		}
		out[attr(se, "Id")] = resolvePart(baseDir, attr(se, "Target"))
		return nil
	})
	return out, err
}

// resolvePart joins a relative target to dir, inside the container.
func resolvePart(dir, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	p := path.Clean(path.Join(dir, target))
	return strings.TrimPrefix(p, "/")
}
