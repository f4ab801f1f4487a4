package server

import (
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// restart stops h and starts a server on the same files and the same
// address, as a daemon restart does: an open tab's origin stays the same.
func restart(t *testing.T, h *harness) *harness {
	t.Helper()
	h.stop()
	return startWith(t, h.restartSetup())
}

// restartLater is restart with the clock moved on by d meanwhile.
func restartLater(t *testing.T, h *harness, d time.Duration) *harness {
	t.Helper()
	h.stop()
	su := h.restartSetup()
	su.shift = d
	return startWith(t, su)
}

// goLogin spends a one-time login code as a browser would and returns the
// session cookie's value and its second secret.
func goLogin(t *testing.T, h *harness) (sid, secret string) {
	t.Helper()
	u, _ := h.srv.LoginURL()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.Name == cookieName {
			sid = c.Value
		}
	}
	m := regexp.MustCompile(`name="corral-secret" content="([^"]+)"`).FindSubmatch(body)
	if sid == "" || m == nil {
		t.Fatalf("login gave no session: %d %s", res.StatusCode, body)
	}
	return sid, string(m[1])
}

// wsStatus opens /ws with a session cookie and, when not "", its second
// secret, and returns the HTTP status of the answer (101: accepted).
func wsStatus(t *testing.T, h *harness, sid, secret string) int {
	t.Helper()
	return wsStatusAs(t, h, cookieName, sid, secret)
}

// wsStatusAs is wsStatus with the named cookie (the owner's or a device's).
func wsStatusAs(t *testing.T, h *harness, cookie, value, secret string) int {
	t.Helper()
	protos := []string{wsProtocol}
	if secret != "" {
		protos = append(protos, secretProtocol+secret)
	}
	d := websocket.Dialer{Subprotocols: protos, HandshakeTimeout: 5 * time.Second}
	hdr := http.Header{"Cookie": {cookie + "=" + value}}
	c, res, err := d.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", hdr)
	if err == nil {
		c.Close()
	}
	if res == nil {
		t.Fatalf("dial /ws: %v", err)
	}
	return res.StatusCode
}

// signedInTab starts a server and a browser tab signed in to it as the
// owner.
func signedInTab(t *testing.T) (*harness, *browser) {
	t.Helper()
	h := start(t, "")
	b := newBrowser(t)
	b.login(h)
	return h, b
}

// waitRefused waits until tab b says its login is refused (the banner
// shown), logs how long that took (logf formats the time) and returns
// the banner's text.
func waitRefused(t *testing.T, b *browser, logf string) string {
	t.Helper()
	began := time.Now()
	b.wait(`document.querySelector('#conn').dataset.state === 'refused' && !document.querySelector('#login-banner').hidden`)
	t.Logf(logf, time.Since(began).Round(time.Millisecond))
	return js[string](b, `document.querySelector('#login-banner').textContent`)
}

// TestSessionSurvivesRestartOnlyWhole: a browser login works after a
// restart (it is kept in the store), but only with its second secret;
// one signed out before the restart stays refused after it, and the
// stored row (a hash) is no cookie. These are attacks from outside
// against a running server with a real store on disk.
func TestSessionSurvivesRestartOnlyWhole(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	sid, secret := goLogin(t, h)
	gone, goneSecret := goLogin(t, h)
	if got := wsStatus(t, h, sid, secret); got != http.StatusSwitchingProtocols {
		t.Fatalf("fresh login: /ws answered %d", got)
	}
	// Sign one out the way the dashboard does.
	form := url.Values{"secret": {goneSecret}}
	req, _ := http.NewRequest(http.MethodPost, h.url+"/logout", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: cookieName, Value: gone})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", res.StatusCode)
	}

	// The stolen row: the hash in the database, tried as a cookie in
	// every spelling, with and without a secret made from it.
	db, err := sql.Open("sqlite3", "file:"+h.files.DB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]byte
	r, err := db.Query(`SELECT id_sha256 FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var b []byte
		r.Scan(&b)
		rows = append(rows, b)
	}
	r.Close()
	db.Close()
	if len(rows) != 1 {
		t.Fatalf("the database holds %d sessions; want the one still signed in", len(rows))
	}
	for _, s := range []string{string(rows[0]), hex.EncodeToString(rows[0]), base64.RawURLEncoding.EncodeToString(rows[0]), base64.StdEncoding.EncodeToString(rows[0])} {
		if strings.Contains(string(rows[0]), sid) {
			t.Fatal("the database holds the session id itself")
		}
		if got := wsStatus(t, h, url.QueryEscape(s), secret); got != http.StatusUnauthorized {
			t.Errorf("the stored hash as a cookie: /ws answered %d; want 401", got)
		}
	}

	h = restart(t, h)
	if got := wsStatus(t, h, sid, secret); got != http.StatusSwitchingProtocols {
		t.Errorf("login after a restart: /ws answered %d; want 101", got)
	}
	if got := wsStatus(t, h, sid, ""); got != http.StatusUnauthorized {
		t.Errorf("login after a restart without its second secret: /ws answered %d; want 401", got)
	}
	if got := wsStatus(t, h, sid, goneSecret); got != http.StatusUnauthorized {
		t.Errorf("login after a restart with another login's secret: /ws answered %d; want 401", got)
	}
	if got := wsStatus(t, h, gone, goneSecret); got != http.StatusUnauthorized {
		t.Errorf("a login signed out before the restart, replayed after it: /ws answered %d; want 401", got)
	}

	// Expired while Corral was stopped: refused after the start.
	h = restartLater(t, h, sessionTTL+time.Minute)
	if got := wsStatus(t, h, sid, secret); got != http.StatusUnauthorized {
		t.Errorf("an expired login after a restart: /ws answered %d; want 401", got)
	}
}

// TestDashboardLoginSurvivesRestart: an open dashboard tab reconnects by
// itself after Corral restarts, still signed in.
func TestDashboardLoginSurvivesRestart(t *testing.T) {
	t.Parallel()
	h, b := signedInTab(t)
	h.stop()
	b.wait(`document.querySelector('#conn').dataset.state === 'closed'`)
	h = startWith(t, h.restartSetup())
	b.wait(`document.querySelector('#conn').dataset.state === 'open'`)
	if !js[bool](b, `document.querySelector('#login-banner').hidden`) {
		t.Error("the tab says its login no longer works after a restart")
	}
	b.noPageErrors()
}

// TestDashboardLoginRefusedShowsWayBack: while Corral is down the tab
// says it is reconnecting; once Corral answers but refuses the login
// (here: it expired meanwhile), the tab says so within seconds, shows
// the way back, and stops knocking.
func TestDashboardLoginRefusedShowsWayBack(t *testing.T) {
	t.Parallel()
	h, b := signedInTab(t)
	h.stop()
	b.wait(`document.querySelector('#conn').dataset.state === 'closed' && document.querySelector('.conn-label').textContent === 'Reconnecting…'`)
	if !js[bool](b, `document.querySelector('#login-banner').hidden`) {
		t.Fatal("an unreachable server is reported as a refused login")
	}
	later := h.restartSetup()
	later.shift = sessionTTL + time.Minute
	startWith(t, later)
	text := waitRefused(t, b, "refused login shown %v after the server came back")
	if !strings.Contains(text, "no longer works") || !strings.Contains(text, "corral open") || !strings.Contains(text, "Open dashboard") {
		t.Errorf("banner %q does not say the login ended and how to get back", text)
	}
	if got := js[string](b, `document.querySelector('.conn-label').textContent`); got != "Signed out" {
		t.Errorf("connection label %q; want Signed out", got)
	}
	b.shot("dashboard-login-refused")
	b.noPageErrors()
}

// TestDashboardSignOut: Sign out ends the session on the server: the
// old cookie with its secret is refused afterwards, before and after a
// restart.
func TestDashboardSignOut(t *testing.T) {
	t.Parallel()
	h, b := signedInTab(t)
	secret := js[string](b, `sessionStorage.getItem('corral.secret')`)
	sid := browserCookie(t, b, cookieName)
	if sid == "" || secret == "" {
		t.Fatal("no session in the browser after login")
	}
	b.click(`form.signout button`)
	b.wait(`document.body.classList.contains('signed-out')`)
	if got := wsStatus(t, h, sid, secret); got != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie with its secret: /ws answered %d; want 401", got)
	}
	h = restart(t, h)
	if got := wsStatus(t, h, sid, secret); got != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie replayed after a restart: /ws answered %d; want 401", got)
	}
}

// browserCookie is the value of the named cookie in b, "" if none.
func browserCookie(t *testing.T, b *browser, name string) string {
	t.Helper()
	got, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// pairInPage names the phone on the pairing page b shows, waits until it
// lands on Approvals, connected, and returns its cookie and secret.
func pairInPage(t *testing.T, b *browser, name string) (token, secret string) {
	t.Helper()
	b.do(chromedp.SendKeys("#name", name))
	b.click(`#pair button[type=submit]`)
	b.wait(`location.pathname === '/' && location.hash === '#approvals' && document.title.endsWith('Approvals') && document.querySelector('#conn')?.dataset.state === 'open'`)
	token = browserCookie(t, b, deviceCookie)
	secret = js[string](b, `localStorage.getItem('corral.device') || ''`)
	if token == "" || secret == "" {
		t.Fatal("no device credential in the browser after pairing")
	}
	return token, secret
}

// TestPhoneRevokedShowsWayBack: a phone revoked on the computer says
// within seconds that it is no longer paired and how to pair again; a
// paired phone still works after Corral restarts.
func TestPhoneRevokedShowsWayBack(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	b := newBrowser(t)
	b.phone()
	code, _ := h.srv.pair.NewCode(h.clock.Now())
	b.do(chromedp.Navigate(h.url + "/pair?code=" + code))
	pairInPage(t, b, "Kitchen phone")
	h = restart(t, h)
	b.wait(`document.querySelector('#conn').dataset.state === 'open' && document.querySelector('#login-banner').hidden`)
	owner := h.dial(ownerToken)
	devs := rpcCall[struct{ Devices []struct{ ID, Name string } }](t, owner, "device.list", nil)
	if len(devs.Devices) != 1 {
		t.Fatalf("devices after a restart: %+v", devs)
	}
	rpcCall[any](t, owner, "device.revoke", map[string]string{"id": devs.Devices[0].ID})
	text := waitRefused(t, b, "revoked phone told %v after the revocation")
	if !strings.Contains(text, "no longer paired") || !strings.Contains(text, "Pair a phone") {
		t.Errorf("banner %q does not say the phone was unpaired and how to pair again", text)
	}
	b.shot("phone-no-longer-paired")
	b.noPageErrors()
}

// TestPhonePairing: at 390 px, the pairing page says a used code is used
// before anything is typed; a fresh code pairs and lands on Approvals;
// Sign out on the phone revokes it on the server, forgets its secret and
// shows the pairing page, and its old cookie with its secret is refused.
func TestPhonePairing(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	b := newBrowser(t)
	b.phone()

	used, _ := h.srv.pair.NewCode(h.clock.Now())
	if resp, _ := pair(t, h, used, "Someone else"); resp.StatusCode != 200 {
		t.Fatalf("pair with the first code: %d", resp.StatusCode)
	}
	b.do(chromedp.Navigate(h.url + "/pair?code=" + used))
	b.wait(`document.readyState === 'complete'`)
	if !js[bool](b, `!!document.querySelector('#code-gone') && !document.querySelector('#name') && /already used or has expired/.test(document.body.textContent)`) {
		t.Error("a used code's page does not say so up front (or still offers the form)")
	}
	b.shot("phone-pairing-used")

	fresh, _ := h.srv.pair.NewCode(h.clock.Now())
	b.do(chromedp.Navigate(h.url + "/pair?code=" + fresh))
	b.wait(`!!document.querySelector('#name') && getComputedStyle(document.querySelector('button')).borderRadius !== '0px'`)
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("pairing page is %dpx wide at 390px", w)
	}
	b.shot("phone-pairing-fresh")
	token, secret := pairInPage(t, b, "Kitchen phone")
	if got := wsStatusAs(t, h, deviceCookie, token, secret); got != http.StatusSwitchingProtocols {
		t.Fatalf("the paired phone's credential: /ws answered %d", got)
	}
	js[bool](b, `(document.querySelector('form.signout button').click(), true)`)
	b.wait(`!!document.querySelector('#not-paired')`)
	if got := js[string](b, `localStorage.getItem('corral.device') || ''`); got != "" {
		t.Error("the phone still keeps its secret after signing out")
	}
	if got := wsStatusAs(t, h, deviceCookie, token, secret); got != http.StatusUnauthorized {
		t.Errorf("the signed-out phone's old cookie with its secret: /ws answered %d; want 401", got)
	}
	devs, err := h.store.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Name == "Kitchen phone" {
			t.Error("the signed-out phone is still in the device list")
		}
	}
	b.shot("phone-signed-out")
	b.noPageErrors()
}
