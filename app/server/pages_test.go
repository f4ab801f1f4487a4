package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The pages outside the dashboard (a used login link, an error, pairing)
// have the dashboard's look: its stylesheet, palette and logo.
func TestPagesOutsideTheDashboardLookLikeIt(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	resp, err := http.Get(h.url + "/login?code=not-a-code")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "Login link used or expired") {
		t.Fatalf("a used login link: %d %s", resp.StatusCode, page)
	}
	for _, want := range []string{`href="/pair.css"`, `class="signed-out-card"`, `src="/app-icon.svg"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the login-expired page lacks %s:\n%s", want, page)
		}
	}
	resp, err = http.Get(h.url + "/pair.css")
	if err != nil {
		t.Fatal(err)
	}
	css, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(css), string(uiAssets().files["app.css"].body)) {
		t.Error("/pair.css is not the dashboard's stylesheet")
	}

	chromiumPath(t) // the rest in a real browser; skip under -short
	lan, err := h.srv.ListenLAN()
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	defer lan.Close()
	code := rpcCall[struct{ Code string }](t, h.dial(ownerToken), "pairing.start", nil)
	b := newBrowser(t)
	dashBG := ""
	for _, p := range []struct{ name, url string }{
		{"login-expired", h.url + "/login?code=not-a-code"},
		{"pairing", h.url + "/pair?code=" + code.Code},
		{"pairing-code-gone", h.url + "/pair?code=000000"},
	} {
		for _, w := range []int64{1280, 390} {
			b.viewport(w)
			b.do(chromedp.Navigate(p.url))
			b.wait(`document.readyState === 'complete' && document.querySelector('h1 img')?.complete`)
			got := js[[]string](b, `[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector('main')).borderRadius, String(document.querySelector('h1 img').naturalWidth)]`)
			if got[2] == "0" {
				t.Errorf("%s: the logo did not load", p.name)
			}
			if dashBG == "" {
				dashBG = got[0]
			}
			if got[0] != "rgb(245, 244, 240)" || got[1] != "14px" {
				t.Errorf("%s at %d px: background %s, card radius %s; want the dashboard's rgb(245, 244, 240) and 14px", p.name, w, got[0], got[1])
			}
			if o := b.overflow(); o != "" {
				t.Errorf("%s at %d px scrolls sideways: %s", p.name, w, o)
			}
			b.shot(fmt.Sprintf("%s-%d", p.name, w))
		}
	}
	b.noPageErrors()
}

// A used login link opened again in a browser that is signed in opens the
// dashboard (the tray's and the terminal's links are often clicked twice),
// keeping its fragment; in a browser that is not, it says the link is used.
func TestUsedLoginLinkInASignedInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	b := newBrowser(t)
	u, _ := h.srv.LoginURL()
	b.do(chromedp.Navigate(u))
	b.wait(`document.querySelector('#conn')?.dataset.state === 'open'`)
	b.do(chromedp.Navigate(u + "#activity"))
	b.wait(`location.pathname === '/' && document.querySelector('#conn')?.dataset.state === 'open' && location.hash === '#activity'`)
	if txt := js[string](b, `document.body.innerText`); strings.Contains(txt, "Login link used") {
		t.Errorf("a used link in a signed-in browser: %q", txt)
	}

	// Without the session's cookie the same link is used (one browser at
	// a time in these tests: a plain client stands for the other one).
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a used link without the session: %d, want 403", resp.StatusCode)
	}
}
