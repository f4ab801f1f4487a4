package docread

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxHTMLToken bounds one token (a tag with its attributes, or a run of
// text) the tokenizer buffers.
const maxHTMLToken = 4 << 20

// extractHTML writes the visible text of an HTML or XHTML document:
// block elements end lines, table cells are separated by tabs, scripts,
// styles and the head are left out, white space is collapsed outside pre.
func extractHTML(r io.Reader, w *textWriter) error {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxHTMLToken)
	skip := 0 // depth inside script, style, head …
	pre := 0
	cells := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return asDocError(err)
			}
			return nil
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := string(z.Text())
			if pre > 0 {
				if err := w.write(strings.ReplaceAll(t, "\r\n", "\n")); err != nil {
					return err
				}
				continue
			}
			if err := writeCollapsed(w, t); err != nil {
				return err
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			end := tt == html.EndTagToken
			switch a {
			case atom.Script, atom.Style, atom.Head, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Iframe, atom.Object:
				if tt == html.SelfClosingTagToken {
					continue
				}
				if end {
					skip = max(skip-1, 0)
				} else {
					skip++
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.Br:
				w.newline()
			case atom.Pre:
				if end {
					pre = max(pre-1, 0)
				} else {
					pre++
				}
				w.newline()
			case atom.Td, atom.Th:
				if end {
					cells = max(cells-1, 0)
					w.cellEnd()
				} else {
					cells++
				}
			case atom.Tr:
				w.newline()
			case atom.Li:
				w.newline()
				if !end {
					if err := w.text("- "); err != nil {
						return err
					}
				}
			case atom.Img:
				if alt := attrHTML(z, "alt"); alt != "" && !end {
					w.spaceBefore()
					if err := writeCollapsed(w, "["+alt+"]"); err != nil {
						return err
					}
				}
			default:
				if isBlock(a) {
					if cells > 0 {
						w.spaceBefore()
					} else {
						if (a == atom.P || isHeading(a)) && end {
							w.paragraph() // a blank line after paragraphs and headings
						} else {
							w.newline()
						}
					}
				}
			}
		}
	}
}

// writeCollapsed writes text with runs of white space as single spaces.
func writeCollapsed(w *textWriter, t string) error {
	if strings.TrimSpace(t) == "" {
		if t != "" {
			w.spaceBefore()
		}
		return nil
	}
	if unicode.IsSpace(rune(t[0])) {
		w.spaceBefore()
	}
	if err := w.text(strings.Join(strings.Fields(t), " ")); err != nil {
		return err
	}
	if unicode.IsSpace(rune(t[len(t)-1])) {
		w.spaceBefore()
	}
	return nil
}

func attrHTML(z *html.Tokenizer, want string) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == want {
			return string(v)
		}
		if !more {
			return ""
		}
	}
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd, atom.Table, atom.Thead, atom.Tbody, atom.Tfoot,
		atom.Blockquote, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside,
		atom.Main, atom.Figure, atom.Figcaption, atom.Hr, atom.Address, atom.Caption, atom.Body,
		atom.Form, atom.Fieldset, atom.Details, atom.Summary:
		return true
	}
	return false
}
