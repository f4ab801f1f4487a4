package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/core/testkit/poll"
	"github.com/chromedp/chromedp"
)

// leakPage is an agent's report that tries to send what it read to a
// server: an image, a CSS url(), a stylesheet, a font and a prefetch,
// each tagged with mark so the listener can tell which page asked.
func leakPage(base, mark string) string {
	return fmt.Sprintf(`<!DOCTYPE html><html><head><title>Agent report</title>
<link rel="prefetch" href="%[1]s/prefetch?m=%[2]s">
<link rel="stylesheet" href="%[1]s/sheet.css?m=%[2]s">
<style>
@font-face { font-family: leak; src: url(%[1]s/font.woff2?m=%[2]s); }
body { background: url(%[1]s/css-bg?m=%[2]s); font-family: leak; }
</style></head>
<body><h1>Agent report</h1><p>secret: the owner's tax number</p>
<img src="%[1]s/img.png?m=%[2]s" alt="chart">
</body></html>`, base, mark)
}

// TestFilesOutReportCannotPhoneHome opens an agent's HTML report from
// /files/out in real Chromium and counts the requests that reach a
// loopback listener the report points at: none may. The same page served
// without Corral's policy (the control) reaches the listener, so the
// test can see a leak when there is one.
func TestFilesOutReportCannotPhoneHome(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")

	var mu sync.Mutex
	hits := map[string][]string{} // mark → paths asked
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Query().Get("m")] = append(hits[r.URL.Query().Get("m")], r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer listener.Close()
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, leakPage(listener.URL, r.URL.Query().Get("m")))
	}))
	defer control.Close()
	seen := func(mark string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), hits[mark]...)
	}

	alice := h.dial(aliceKey)
	res := rpcCall[map[string]string](t, alice, "result.save", m("title", "report", "content", leakPage(listener.URL, "report"), "format", "html"))
	md := rpcCall[map[string]string](t, alice, "result.save", m("title", "notes", "format", "markdown",
		"content", "# Notes\n\n![chart]("+listener.URL+"/img.png?m=markdown)\n"))

	folder := rpcCall[map[string]any](t, alice, "link.create", m("path", "output"))
	// Every answer of the route carries the policy: a file, rendered
	// Markdown, a folder's listing, an error.
	for _, u := range []string{res["url"], md["url"] + "&view=1", folder["url"].(string), h.url + "/files/out?path=x&token=y"} {
		resp, _ := get(t, u)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"sandbox", "default-src 'none'", "img-src 'self' data:", "form-action 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s (%d): CSP %q lacks %q", u, resp.StatusCode, csp, want)
			}
		}
		if strings.Contains(csp, "connect-src") {
			t.Errorf("%s: CSP %q names connect-src", u, csp)
		}
	}

	b := newBrowser(t)
	for _, u := range []string{res["url"], md["url"] + "&view=1"} {
		b.do(chromedp.Navigate(u))
		b.wait(`document.readyState === 'complete' && document.querySelector('h1') !== null`)
	}
	// The control, loaded after the reports: once its requests have all
	// arrived, anything the reports had started would have arrived too.
	b.do(chromedp.Navigate(control.URL + "/?m=control"))
	poll.Eventually(t, 10*time.Second, func() bool { return len(seen("control")) >= 4 },
		"the control page without Corral's policy to reach the listener 4 times, or the test cannot see a leak")
	if got := seen("report"); len(got) != 0 {
		t.Errorf("the HTML report reached the listener: %v", got)
	}
	if got := seen("markdown"); len(got) != 0 {
		t.Errorf("the rendered Markdown reached the listener: %v", got)
	}
}
