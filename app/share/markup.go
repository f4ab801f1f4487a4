package share

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"corral/core/links"
)

// Resource hints (<link rel=preconnect>, dns-prefetch …) are outside CSP:
// Chromium connects to the server a hint names as soon as the page opens,
// and a name alone carries data through DNS. So a page an agent wrote is
// served with every <link> element removed (a report has no use for them:
// default-src 'none' refuses the stylesheets and icons they would load),
// and with DNS prefetching off. Markup files over maxSanitized are served
// as plain text instead, and so are XML documents whose DOCTYPE declares
// entities, attributes or elements (serveMarkup).

const maxSanitized = 16 << 20

// markupType reports whether ct is a document type a browser renders with
// elements of its own (HTML, XHTML, SVG, XML).
func markupType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "image/svg+xml" ||
		mt == "text/xml" || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// contentType is what /files/out answers p with: by its extension, else
// by sniffing its first bytes (which it reads and gives back in front).
func contentType(p string, sv links.Served) (ct string, head []byte) {
	if ct = mime.TypeByExtension(path.Ext(p)); ct != "" {
		return ct, nil
	}
	head = make([]byte, 512)
	n, _ := io.ReadFull(sv.File, head)
	head = head[:n]
	return http.DetectContentType(head), head
}

// serveMarkup answers a markup file without its <link> elements (ranges
// and preconditions as http.ServeContent handles them). An XML document
// (SVG, XHTML, …) that declares anything in its DOCTYPE is served as
// plain text: an entity declared there expands into elements, a <link>
// among them, that no reading of the bytes can see. So is an HTML page
// that, parsed, still holds a link element (htmlWithoutLinks).
func serveMarkup(w http.ResponseWriter, r *http.Request, p, ct string, head []byte, sv links.Served) {
	src, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), sv.File), maxSanitized+1))
	if err != nil {
		plain(w, http.StatusInternalServerError, "Corral could not read this file.")
		return
	}
	if len(src) > maxSanitized {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(src[:maxSanitized])
		return
	}
	var out []byte
	if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
		out = htmlWithoutLinks(src)
	} else {
		out = xmlWithoutLinks(src)
	}
	if out == nil {
		ct, out = "text/plain; charset=utf-8", src
	}
	w.Header().Set("Content-Type", ct)
	http.ServeContent(w, r, path.Base(p), sv.Info.Modified, bytes.NewReader(out))
}

// withoutLinks returns src with every <link> start tag (an element named
// link in any namespace prefix) replaced by an empty comment; everything
// else stays byte for byte. A comment, not nothing: removing "<link>" from
// "<<link>link>" would join the rest into a new one.
//
// A page here is served without scripts, and without scripts a browser
// reads what <noscript> holds as markup, where the tokenizer reads it as
// text. So the tokenizer is given a copy of src, of the same length, in
// which every "<noscript" is renamed, and what is written is src's own
// bytes at the same offsets.
func withoutLinks(src []byte) []byte {
	return linksOut(src, renamed(src, "noscript"))
}

// htmlWithoutLinks is withoutLinks checked by parsing its result as the
// browser will (without scripts): it returns nil when a link element is
// still there. That happens where the tokenizer's reading of raw text is
// not the page's, as with <style> inside <svg> or <math>, which holds
// markup there, and a <p> in it ends the SVG.
func htmlWithoutLinks(src []byte) []byte {
	out := withoutLinks(src)
	doc, err := html.ParseWithOptions(bytes.NewReader(out), html.ParseOptionEnableScripting(false))
	if err != nil {
		return nil
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Link {
			return nil
		}
	}
	return out
}

// rawText are the elements whose content an HTML tokenizer reads as text.
// XML has none: there <style/> is empty and what follows is markup.
var rawText = []string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// xmlWithoutLinks is withoutLinks for an XML document: no element's
// content is read as text. It returns nil for a document whose DOCTYPE
// declares entities, attributes or elements (<!ENTITY, <!ATTLIST,
// <!ELEMENT, any case), which only a whole XML parser could follow.
func xmlWithoutLinks(src []byte) []byte {
	low := bytes.ToLower(src)
	for _, decl := range []string{"<!entity", "<!attlist", "<!element"} {
		if bytes.Contains(low, []byte(decl)) {
			return nil
		}
	}
	return linksOut(src, renamed(src, rawText...))
}

// linksOut writes src with the <link> start tags that tokenizing seen
// finds replaced; seen is src with only the tag names of some start
// tags changed, so that offsets in one are offsets in the other.
func linksOut(src, seen []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(seen))
	z.SetMaxBuf(0)
	var out bytes.Buffer
	out.Grow(len(src))
	off := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out.Bytes()
		}
		raw := z.Raw()
		orig := src[off : off+len(raw)]
		off += len(raw)
		if isLinkStart(z, tt) {
			out.WriteString("<!---->")
			continue
		}
		out.Write(orig)
	}
}

// isLinkStart reports whether z's current token, of type tt, starts an
// element named link in any namespace prefix.
func isLinkStart(z *html.Tokenizer, tt html.TokenType) bool {
	if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
		return false
	}
	name, _ := z.TagName()
	n := string(name)
	if i := strings.LastIndexByte(n, ':'); i >= 0 {
		n = n[i+1:]
	}
	return n == "link"
}

// renamed returns a copy of src in which each "<NAME" (any case) of the
// given names has its first letter replaced by 'q' ("<qoscript",
// "<qtyle"): no raw-text element, and not link, has such a name.
func renamed(src []byte, names ...string) []byte {
	c := bytes.Clone(src)
	for i := 0; i < len(c); i++ {
		if c[i] != '<' {
			continue
		}
		for _, n := range names {
			if i+1+len(n) <= len(c) && bytes.EqualFold(c[i+1:i+1+len(n)], []byte(n)) {
				c[i+1] = 'q'
				break
			}
		}
	}
	return c
}
