package share

import (
	"bytes"
	"testing"

	"golang.org/x/net/html"
)

func TestWithoutLinks(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`<p>a</p><link rel=preconnect href="http://x/">b`:    `<p>a</p><!---->b`,
		`<LINK REL="dns-prefetch" HREF="//leak.example"/>ok`: `<!---->ok`,
		`<svg><html:link rel=preconnect href=//x /></svg>`:   `<svg><!----></svg>`,
		`<<link>link>`: `<<!---->link>`,
		`<linkage>kept</linkage><!-- <link rel=preconnect> -->`: `<linkage>kept</linkage><!-- <link rel=preconnect> -->`,
		"<p title='<link>'>é\x00</p>":                           "<p title='<link>'>é\x00</p>",
		// Served without scripts, <noscript> holds markup, not text.
		`<noscript><link rel=preconnect href=//x></noscript>`: `<noscript><!----></noscript>`,
		`<NoScript/><link rel=preconnect href=//x>`:           `<NoScript/><!---->`,
	} {
		if got := string(withoutLinks([]byte(in))); got != want {
			t.Errorf("withoutLinks(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzWithoutLinks: whatever an agent writes, what is served holds no
// element a browser would read as <link>, and nothing else is lost.
func FuzzWithoutLinks(f *testing.F) {
	for _, s := range []string{"<link rel=preconnect href=//x>", "<li<link>nk>", "<<link>link>", "<script><link></script>", "<link", "<a href='<link>'>", "<noscript><link></noscript>", "<svg><style><p><link></style></svg>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := htmlWithoutLinks(in)
		if out == nil {
			return // served as text
		}
		if hasLinkStart(out) {
			t.Fatalf("a <link> survived: %q → %q", in, out)
		}
		// As a browser builds the page, served without scripts (so that
		// <noscript> holds elements).
		doc, err := html.ParseWithOptions(bytes.NewReader(out), html.ParseOptionEnableScripting(false))
		if err != nil {
			return
		}
		for n := range doc.Descendants() {
			if n.Type == html.ElementNode && n.Data == "link" {
				t.Fatalf("a <link> element survived: %q → %q", in, out)
			}
		}
	})
}

func TestHTMLWithoutLinks(t *testing.T) {
	t.Parallel()
	if got := string(htmlWithoutLinks([]byte(`<svg><style>a</style></svg><link>`))); got != `<svg><style>a</style></svg><!---->` {
		t.Errorf("htmlWithoutLinks changed more than the <link>: %q", got)
	}
	for _, in := range []string{
		`<svg><style><p></p><link rel=preconnect href=//x></style></svg>`,
		`<math><title><div></div><link rel=preconnect href=//x></title></math>`,
	} {
		if got := htmlWithoutLinks([]byte(in)); got != nil {
			t.Errorf("htmlWithoutLinks(%q) = %q, want nil (served as text)", in, got)
		}
	}
}

func TestXMLWithoutLinks(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`<svg><style/><link href="//x"/></svg>`:           `<svg><style/><!----></svg>`,
		`<html><head><TITLE/><h:link href="//x"/></head>`: `<html><head><TITLE/><!----></head>`,
		`<svg><script><![CDATA[ a ]]></script></svg>`:     `<svg><script><![CDATA[ a ]]></script></svg>`,
	} {
		if got := string(xmlWithoutLinks([]byte(in))); got != want {
			t.Errorf("xmlWithoutLinks(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{
		`<!DOCTYPE svg [<!ENTITY l "&#60;link/&#62;">]><svg>&l;</svg>`,
		`<!doctype svg [<!Attlist svg a CDATA "x">]><svg/>`,
		`<!DOCTYPE svg [<!ELEMENT svg ANY>]><svg/>`,
	} {
		if got := xmlWithoutLinks([]byte(in)); got != nil {
			t.Errorf("xmlWithoutLinks(%q) = %q, want nil (served as text)", in, got)
		}
	}
}

// FuzzXMLWithoutLinks: read as an HTML tokenizer would with no raw-text
// element (as XML is), what is served holds no <link> start tag.
func FuzzXMLWithoutLinks(f *testing.F) {
	for _, s := range []string{"<svg><style/><link/></svg>", "<title/><x:link/>", "<![CDATA[<link/>]]><link/>", "<?pi > <link/> ?>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := xmlWithoutLinks(in)
		if out == nil {
			return
		}
		if hasLinkStart(renamed(out, rawText...)) {
			t.Fatalf("a <link> survived: %q → %q", in, out)
		}
	})
}

// hasLinkStart reports whether an HTML tokenizer finds a <link> start tag
// in b.
func hasLinkStart(b []byte) bool {
	z := html.NewTokenizer(bytes.NewReader(b))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return false
		}
		if isLinkStart(z, tt) {
			return true
		}
	}
}
