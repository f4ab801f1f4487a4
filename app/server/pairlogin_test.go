package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"corral/app/pairing"
	"corral/app/pairing/pairingtest"
	"corral/app/testkit/httpcheck"
	"corral/core/testkit/fakeclock"
	"corral/store"
)

// The login handler against map-backed fakes: the one-time codes and
// sessions are the real in-memory ones on a clock the test turns; the
// device store is a map. No database, no sockets. The end-to-end tests
// (pairing_test.go, login_state_test.go, secret_test.go) run the same
// handler inside the real server. The pairing page's own tests over fakes
// are app/pairing's; TestPairRefusesCrossSitePosts runs it here, in the
// server, with the server's Origin check.

var testKey = secretKey{1, 2, 3}

// loginRig is a login handler over the real in-memory sessions and a map
// of paired devices, with what it ended and wrote down.
type loginRig struct {
	h       loginHandler
	logins  *logins
	devices pairingtest.Devices
	clock   *fakeclock.Clock
	audit   *auditLines
	hungUp  []*conn // connections the handler's matches picked, of the rig's open ones
	open    []*conn
}

func newLoginRig() *loginRig {
	r := &loginRig{devices: pairingtest.Devices{}, clock: fakeclock.New(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)), audit: &auditLines{}}
	r.logins = newLogins(r.clock.Now)
	hangUp := func(match func(*conn) bool) int {
		n := 0
		for _, c := range r.open {
			if match(c) {
				r.hungUp = append(r.hungUp, c)
				n++
			}
		}
		return n
	}
	// A phone's sign out is app/pairing's, over the same map, hanging up
	// as the server does (devices.go).
	paired := pairing.New(pairing.Config{
		Store: r.devices, Now: r.clock.Now, Log: slog.New(slog.DiscardHandler), Record: r.audit.record,
		HangUp: func(id string) { hangUp(func(c *conn) bool { return c.deviceID == id }) },
	})
	r.h = loginHandler{sessions: r.logins, devices: paired, secrets: testKey,
		publicURL: "https://corral.example", hangUp: hangUp}
	return r
}

// signIn follows a fresh login link and returns the session id.
func (r *loginRig) signIn(t *testing.T) string {
	t.Helper()
	code, _ := r.logins.newCode()
	res := httpcheck.Answer(r.h, httptest.NewRequest("GET", "/login?code="+code, nil))
	if res.StatusCode != 200 {
		t.Fatalf("login: %d", res.StatusCode)
	}
	return httpcheck.CookieSet(t, res, cookieName).Value
}

// logoutRequest is the dashboard's Sign out from this computer, with the
// given cookies and secret.
func logoutRequest(secret string, cookies ...*http.Cookie) *http.Request {
	req := httptest.NewRequest("POST", "http://127.0.0.1:7777/logout", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Origin", "http://127.0.0.1:7777")
	if secret != "" {
		req.Header.Set(secretHeader, secret)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

const linkGone = "This login link was already used or has expired."

func TestLoginHandlerOpensOneSessionPerLink(t *testing.T) {
	rig := newLoginRig()
	code, _ := rig.logins.newCode()
	res := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?code="+code, nil))
	body := httpcheck.Body(t, res)
	c := httpcheck.CookieSet(t, res, cookieName)
	if res.StatusCode != 200 || !rig.logins.valid(c.Value) {
		t.Fatalf("login: %d, session valid %v", res.StatusCode, rig.logins.valid(c.Value))
	}
	if !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge != 12*3600 {
		t.Errorf("session cookie over plain HTTP %+v", c)
	}
	if !strings.Contains(body, `<meta name="corral-secret" content="`+testKey.secretFor("session", c.Value)+`">`) {
		t.Errorf("the page does not hand over the session's second secret: %s", body)
	}
	if h := res.Header; h.Get("Content-Security-Policy") != uiCSP || h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("login page headers %v", h)
	}

	// The same link again (from history, a shared screenshot): refused,
	// and no second session is opened.
	res = httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?code="+code, nil))
	httpcheck.WantRefusal(t, res, http.StatusForbidden, linkGone)
	if len(res.Cookies()) != 0 || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("a used link set %v, Cache-Control %q", res.Cookies(), res.Header.Get("Cache-Control"))
	}
}

func TestLoginHandlerRefusesStaleAndForgedLinks(t *testing.T) {
	rig := newLoginRig()
	stale, _ := rig.logins.newCode()
	other, _ := rig.logins.newCode()
	rig.clock.Advance(loginCodeTTL) // two minutes on, both are over
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?code="+stale, nil)), http.StatusForbidden, linkGone)
	fresh, _ := rig.logins.newCode()
	flipped := fresh[:len(fresh)-1] + "A"
	if strings.HasSuffix(fresh, "A") {
		flipped = fresh[:len(fresh)-1] + "B"
	}
	for _, q := range []string{"code=" + stale, "code=" + other, "code=" + flipped, "code=" + fresh[:10], "code=", "", "code=" + strings.Repeat("A", 32)} {
		res := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?"+q, nil))
		httpcheck.WantRefusal(t, res, http.StatusForbidden, linkGone)
		if len(res.Cookies()) != 0 {
			t.Errorf("%q set %v", q, res.Cookies())
		}
	}
	// The fresh link still works once: the forged ones spent nothing.
	if res := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?code="+fresh, nil)); res.StatusCode != 200 {
		t.Errorf("the fresh link after forgeries: %d", res.StatusCode)
	}
}

func TestLogoutHandlerEndsTheSessionAndClearsTheCookie(t *testing.T) {
	rig := newLoginRig()
	sid, other := rig.signIn(t), rig.signIn(t)
	rig.open = []*conn{{session: sid}, {session: other}, {session: sid}}
	res := httpcheck.Answer(rig.h, logoutRequest(testKey.secretFor("session", sid), &http.Cookie{Name: cookieName, Value: sid}))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("logout: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	c := httpcheck.CookieSet(t, res, cookieName)
	if c.Value != "" || c.MaxAge != -1 || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("the cleared cookie %+v", c)
	}
	if rig.logins.valid(sid) || !rig.logins.valid(other) {
		t.Errorf("after logout: signed-out session valid %v, the other tab's %v", rig.logins.valid(sid), rig.logins.valid(other))
	}
	if len(rig.hungUp) != 2 || rig.hungUp[0] != rig.open[0] || rig.hungUp[1] != rig.open[2] {
		t.Errorf("ended connections %v, want the signed-out session's two", rig.hungUp)
	}
}

func TestLogoutHandlerWantsTheSecretWithTheCookie(t *testing.T) {
	rig := newLoginRig()
	sid := rig.signIn(t)
	cookie := &http.Cookie{Name: cookieName, Value: sid}
	for name, req := range map[string]*http.Request{
		// Another local site's server received the cookie, not the secret.
		"the cookie alone":     logoutRequest("", cookie),
		"another's secret":     logoutRequest(testKey.secretFor("session", "other"), cookie),
		"the device's secret":  logoutRequest(testKey.secretFor("device", sid), cookie),
		"another key's secret": logoutRequest(secretKey{9}.secretFor("session", sid), cookie),
	} {
		httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, req), http.StatusForbidden, "Sign out from the dashboard itself.")
		if !rig.logins.valid(sid) {
			t.Fatalf("%s signed the owner out", name)
		}
	}
	// From the LAN the owner's session counts for nothing, secret or not.
	lan := logoutRequest(testKey.secretFor("session", sid), cookie)
	lan.RemoteAddr = "192.0.2.7:50000"
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, lan), http.StatusForbidden, "Sign out from the dashboard itself.")
	if !rig.logins.valid(sid) || len(rig.hungUp) != 0 {
		t.Error("a LAN request signed the owner out")
	}
}

func TestLogoutHandlerRefusesCrossSitePosts(t *testing.T) {
	rig := newLoginRig()
	sid := rig.signIn(t)
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:7778", "https://127.0.0.1:7777"} {
		req := logoutRequest(testKey.secretFor("session", sid), &http.Cookie{Name: cookieName, Value: sid})
		req.Header.Set("Origin", origin)
		res := httpcheck.Answer(rig.h, req)
		httpcheck.WantRefusal(t, res, http.StatusForbidden, "Cross-site request refused.")
		if !rig.logins.valid(sid) || len(res.Cookies()) != 0 {
			t.Errorf("Origin %s signed the owner out", origin)
		}
	}
}

func TestLogoutHandlerSignsAPhoneOut(t *testing.T) {
	rig := newLoginRig()
	rig.devices["tok"] = store.Device{ID: "dv_1", Name: "phone"}
	rig.devices["tok2"] = store.Device{ID: "dv_2", Name: "tablet"}
	rig.open = []*conn{{deviceID: "dv_2"}, {deviceID: "dv_1"}}
	phone := func(secret string) *http.Request {
		req := httptest.NewRequest("POST", "https://192.0.2.1:8443/logout", nil)
		req.Header.Set("Origin", "https://192.0.2.1:8443")
		req.Header.Set(secretHeader, secret)
		req.AddCookie(&http.Cookie{Name: deviceCookie, Value: "tok"})
		return req
	}

	// The cookie alone (or with a wrong secret) revokes nothing.
	for _, secret := range []string{"", testKey.secretFor("device", "tok2"), testKey.secretFor("session", "tok")} {
		httpcheck.Answer(rig.h, phone(secret))
		if _, ok := rig.devices["tok"]; !ok || len(rig.hungUp) != 0 || len(*rig.audit) != 0 {
			t.Fatalf("secret %q signed the phone out", secret)
		}
	}

	res := httpcheck.Answer(rig.h, phone(testKey.secretFor("device", "tok")))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/pair" {
		t.Fatalf("phone sign out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	c := httpcheck.CookieSet(t, res, deviceCookie)
	if c.Value != "" || c.MaxAge != -1 || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("the cleared device cookie %+v", c)
	}
	if _, ok := rig.devices["tok"]; ok || len(rig.devices) != 1 {
		t.Errorf("devices after sign out %v", rig.devices)
	}
	if len(rig.hungUp) != 1 || rig.hungUp[0] != rig.open[1] {
		t.Errorf("ended connections %v, want the phone's", rig.hungUp)
	}
	if want := "device:phone device.revoke dv_1"; len(*rig.audit) != 1 || (*rig.audit)[0] != want {
		t.Errorf("audit %v, want %q", *rig.audit, want)
	}
}

// endless is a body that never ends, counting what was read of it.
type endless struct {
	head string
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for ; n < len(p); n++ {
		if e.read < len(e.head) {
			p[n] = e.head[e.read]
		} else {
			p[n] = 'a'
		}
		e.read++
	}
	return n, nil
}

// A local process that got the session cookie (another server on this
// host) could make logout read a 10 MB form, many at once: it read what
// ParseForm allows before the secret was found missing (seen from
// outside: 20 such posts took the daemon from 36 MB to 364 MB).
func TestLogoutHandlerReadsLittleOfAHugeForm(t *testing.T) {
	rig := newLoginRig()
	sid := rig.signIn(t)
	body := &endless{head: "pad="}
	req := logoutRequest("", &http.Cookie{Name: cookieName, Value: sid})
	req.Body = io.NopCloser(body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, req), http.StatusForbidden, "Sign out from the dashboard itself.")
	if body.read > 64<<10 || !rig.logins.valid(sid) {
		t.Errorf("logout read %d bytes of an endless form (signed out: %v)", body.read, !rig.logins.valid(sid))
	}

	// The dashboard's own Sign out form still works.
	req = httptest.NewRequest("POST", "http://127.0.0.1:7777/logout", strings.NewReader("secret="+testKey.secretFor("session", sid)))
	req.RemoteAddr, req.Header["Origin"] = "127.0.0.1:40000", []string{"http://127.0.0.1:7777"}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: cookieName, Value: sid})
	if res := httpcheck.Answer(rig.h, req); res.StatusCode != http.StatusSeeOther || rig.logins.valid(sid) {
		t.Errorf("the Sign out form: %d, still signed in %v", res.StatusCode, rig.logins.valid(sid))
	}
}

// A HEAD request (a link checker, a preview) gets no body, so never the
// session's secret: it must not spend the owner's one-time link. Seen
// from outside: HEAD /login answered 200 with a session cookie, and the
// owner's GET then said the link was used.
func TestLoginHandlerLeavesTheLinkToAHeadRequest(t *testing.T) {
	rig := newLoginRig()
	code, _ := rig.logins.newCode()
	res := httpcheck.Answer(rig.h, httptest.NewRequest("HEAD", "/login?code="+code, nil))
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET" || len(res.Cookies()) != 0 {
		t.Errorf("HEAD /login: %d, Allow %q, cookies %v", res.StatusCode, res.Header.Get("Allow"), res.Cookies())
	}
	if res := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/login?code="+code, nil)); res.StatusCode != 200 {
		t.Errorf("after a HEAD the owner's GET got %d", res.StatusCode)
	}
}
