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
