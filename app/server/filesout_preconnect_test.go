package server

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/app/share"
	"corral/core/testkit/poll"
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

// An agent's report cannot open a connection to another server: <link
// rel=preconnect> and dns-prefetch are outside CSP, so Chromium connects
// to the host they name the moment the owner opens the report (with a
// host name, the DNS lookup alone carries whatever the agent put into
// it). Each case is a way a <link> could slip past the filter in
// app/share/markup.go. A control page with the same markup, served as is
// from another loopback server with the CSP given, must connect: that
// shows the test would see the connection.
func TestFilesOutReportsCannotPreconnect(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	const html = "text/html; charset=utf-8"
	for _, tc := range []struct{ name, ct, csp, body string }{
		// In <head>, the plain case.
		{"pre.html", html, "", `<!DOCTYPE html><html><head><title>r</title><link rel="preconnect" href="TARGET/"><link rel="dns-prefetch" href="TARGET/"></head><body><h1>report</h1></body></html>`},
		// Served without scripts, Chromium reads what <noscript> holds as markup.
		{"noscript.html", html, "sandbox", `<!DOCTYPE html><html><head><title>r</title></head><body><h1>report</h1><noscript><link rel="preconnect" href="TARGET/"><link rel="dns-prefetch" href="TARGET/"></noscript></body></html>`},
		// XML reads <style/> and <title/> as empty elements (an HTML
		// tokenizer as the start of raw text) and expands DOCTYPE entities.
		{"style.svg", "image/svg+xml", share.CSP, `<svg xmlns="http://www.w3.org/2000/svg"><style/><link xmlns="http://www.w3.org/1999/xhtml" rel="preconnect" href="TARGET/"/><text y="20">report</text></svg>`},
		{"entity.svg", "image/svg+xml", share.CSP, `<!DOCTYPE svg [<!ENTITY l "&#60;link xmlns='http://www.w3.org/1999/xhtml' rel='preconnect' href='TARGET/'/&#62;">]><svg xmlns="http://www.w3.org/2000/svg">&l;<text y="20">report</text></svg>`},
		{"title.xml", "text/xml", share.CSP, `<html xmlns="http://www.w3.org/1999/xhtml"><head><title/><link rel="preconnect" href="TARGET/"/></head><body><h1>report</h1></body></html>`},
		// In HTML, <style> and <title> inside <svg> or <math> hold markup,
		// and a <p> there ends the SVG: a <link> after it is live again.
		{"svgstyle.html", html, share.CSP, `<!DOCTYPE html><h1>report</h1><svg><style><p></p><link rel="preconnect" href="TARGET/"></style></svg>`},
		{"mathtitle.html", html, share.CSP, `<!DOCTYPE html><h1>report</h1><math><title><div></div><link rel="preconnect" href="TARGET/"></title></math>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, reached := acceptCounter(t)
			ctlTarget, ctlReached := acceptCounter(t)
			control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				if tc.csp != "" {
					w.Header().Set("Content-Security-Policy", tc.csp)
				}
				io.WriteString(w, strings.ReplaceAll(tc.body, "TARGET", ctlTarget))
			}))
			defer control.Close()
			rpcCall[map[string]any](t, alice, "file.write", m("path", "output/"+tc.name, "content", strings.ReplaceAll(tc.body, "TARGET", target)))
			link := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/"+tc.name))

			b := newOwnBrowser(t) // an off-the-record tab would not preconnect, even from the control
			b.do(chromedp.Navigate(link["url"].(string)))
			b.wait(`document.readyState === 'complete'`)
			b.do(chromedp.Navigate(control.URL))
			poll.Eventually(t, 10*time.Second, func() bool { return ctlReached.Load() > 0 },
				"the control page's preconnect to reach its listener, or the test cannot see a connection")
			if n := reached.Load(); n != 0 {
				t.Errorf("opening %s from /files/out made %d connection(s) to the server its <link rel=preconnect> names", tc.name, n)
			}
		})
	}
}
