package server

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// acceptCounter is a loopback TCP listener that counts the connections
// made to it, whether or not a request follows.
func acceptCounter(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String(), &n
}

// An agent's report cannot open a connection to another server either:
// <link rel=preconnect> is outside CSP, so Chromium connects to the host
// it names the moment the owner opens the report (with a host name, the
// DNS lookup alone carries whatever the agent put into the name). A
// control page with the same link, loaded after the report, shows the
// test would see the connection.
func TestFilesOutReportCannotPreconnect(t *testing.T) {
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	target, reached := acceptCounter(t)
	ctlTarget, ctlReached := acceptCounter(t)
	page := func(to string) string {
		return fmt.Sprintf(`<!DOCTYPE html><html><head><title>r</title><link rel="preconnect" href="%s/"><link rel="dns-prefetch" href="%s/"></head><body><h1>report</h1></body></html>`, to, to)
	}
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page(ctlTarget))
	}))
	defer control.Close()

	alice := h.dial(aliceKey)
	rpcCall[map[string]any](t, alice, "file.write", m("path", "output/pre.html", "content", page(target)))
	link := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/pre.html"))

	b := newBrowser(t)
	b.do(chromedp.Navigate(link["url"].(string)))
	b.wait(`document.readyState === 'complete' && document.querySelector('h1') !== null`)
	b.do(chromedp.Navigate(control.URL))
	deadline := time.Now().Add(10 * time.Second)
	for ctlReached.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ctlReached.Load() == 0 {
		t.Fatal("the control page's preconnect reached nothing: the test cannot see a connection")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("opening the agent's report from /files/out made %d connection(s) to the server its <link rel=preconnect> names", n)
	}
}

// The same through <noscript>: a report is served without scripts, so
// Chromium parses what <noscript> holds as markup and a <link> in it
// preconnects. The control page has the same policy's sandbox, so that
// its <noscript> is read the same way.
func TestFilesOutReportCannotPreconnectFromNoscript(t *testing.T) {
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	target, reached := acceptCounter(t)
	ctlTarget, ctlReached := acceptCounter(t)
	page := func(to string) string {
		return fmt.Sprintf(`<!DOCTYPE html><html><head><title>r</title></head><body><h1>report</h1><noscript><link rel="preconnect" href="%s/"><link rel="dns-prefetch" href="%s/"></noscript></body></html>`, to, to)
	}
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "sandbox")
		fmt.Fprint(w, page(ctlTarget))
	}))
	defer control.Close()

	alice := h.dial(aliceKey)
	rpcCall[map[string]any](t, alice, "file.write", m("path", "output/pre.html", "content", page(target)))
	link := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/pre.html"))

	b := newBrowser(t)
	b.do(chromedp.Navigate(link["url"].(string)))
	b.wait(`document.readyState === 'complete' && document.querySelector('h1') !== null`)
	b.do(chromedp.Navigate(control.URL))
	deadline := time.Now().Add(10 * time.Second)
	for ctlReached.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ctlReached.Load() == 0 {
		t.Fatal("the control page's preconnect in <noscript> reached nothing: the test cannot see a connection")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("opening the agent's report from /files/out made %d connection(s) to the server a <link rel=preconnect> inside <noscript> names", n)
	}
}

// SVG and XML reports: an XML parser reads <style/> as an empty element
// (an HTML tokenizer as the start of raw text), and expands an entity
// declared in the DOCTYPE into elements. Neither may carry a <link> past
// /files/out. The control serves each page as it is, with the same
// policy, and shows Chromium would connect.
func TestFilesOutXMLReportCannotPreconnect(t *testing.T) {
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	for _, tc := range []struct{ name, ct, body string }{
		{"style.svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><style/><link xmlns="http://www.w3.org/1999/xhtml" rel="preconnect" href="%s/"/><text y="20">report</text></svg>`},
		{"entity.svg", "image/svg+xml", `<!DOCTYPE svg [<!ENTITY l "&#60;link xmlns='http://www.w3.org/1999/xhtml' rel='preconnect' href='%s/'/&#62;">]><svg xmlns="http://www.w3.org/2000/svg">&l;<text y="20">report</text></svg>`},
		{"title.xml", "text/xml", `<html xmlns="http://www.w3.org/1999/xhtml"><head><title/><link rel="preconnect" href="%s/"/></head><body><h1>report</h1></body></html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, reached := acceptCounter(t)
			ctlTarget, ctlReached := acceptCounter(t)
			control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				w.Header().Set("Content-Security-Policy", filesOutCSP)
				fmt.Fprintf(w, tc.body, ctlTarget)
			}))
			defer control.Close()
			rpcCall[map[string]any](t, alice, "file.write", m("path", "output/"+tc.name, "content", fmt.Sprintf(tc.body, target)))
			link := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/"+tc.name))

			b := newBrowser(t)
			b.do(chromedp.Navigate(link["url"].(string)))
			b.wait(`document.readyState === 'complete'`)
			b.do(chromedp.Navigate(control.URL))
			deadline := time.Now().Add(10 * time.Second)
			for ctlReached.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if ctlReached.Load() == 0 {
				t.Fatal("the control page's preconnect reached nothing: the test cannot see a connection")
			}
			if n := reached.Load(); n != 0 {
				t.Errorf("opening %s from /files/out made %d connection(s) to the server its <link rel=preconnect> names", tc.name, n)
			}
		})
	}
}

// In HTML, <style> and <title> inside <svg> or <math> hold markup, not
// text, and a <p> there ends the SVG: a <link> after it is an HTML link
// element again.
func TestFilesOutForeignContentCannotPreconnect(t *testing.T) {
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	for _, tc := range []struct{ name, body string }{
		{"svgstyle.html", `<!DOCTYPE html><h1>report</h1><svg><style><p></p><link rel="preconnect" href="%s/"></style></svg>`},
		{"mathtitle.html", `<!DOCTYPE html><h1>report</h1><math><title><div></div><link rel="preconnect" href="%s/"></title></math>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, reached := acceptCounter(t)
			ctlTarget, ctlReached := acceptCounter(t)
			control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("Content-Security-Policy", filesOutCSP)
				fmt.Fprintf(w, tc.body, ctlTarget)
			}))
			defer control.Close()
			rpcCall[map[string]any](t, alice, "file.write", m("path", "output/"+tc.name, "content", fmt.Sprintf(tc.body, target)))
			link := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/"+tc.name))

			b := newBrowser(t)
			b.do(chromedp.Navigate(link["url"].(string)))
			b.wait(`document.readyState === 'complete'`)
			b.do(chromedp.Navigate(control.URL))
			deadline := time.Now().Add(10 * time.Second)
			for ctlReached.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if ctlReached.Load() == 0 {
				t.Fatal("the control page's preconnect reached nothing: the test cannot see a connection")
			}
			if n := reached.Load(); n != 0 {
				t.Errorf("opening %s from /files/out made %d connection(s) to the server its <link rel=preconnect> names", tc.name, n)
			}
		})
	}
}
