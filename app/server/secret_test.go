package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// ownerLogin spends a fresh login link the way a browser would and
// returns the session cookie and the second secret the login page hands
// to the dashboard's origin.
func ownerLogin(t *testing.T, h *harness) (cookie, secret string) {
	t.Helper()
	u, _ := h.srv.LoginURL()
	resp, body := get(t, u)
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c.Value
		}
	}
	m := regexp.MustCompile(`<meta name="corral-secret" content="([^"]+)">`).FindStringSubmatch(body)
	if resp.StatusCode != 200 || cookie == "" || m == nil {
		t.Fatalf("login: %d, cookie %q\n%s", resp.StatusCode, cookie, body)
	}
	return cookie, m[1]
}

// wsDial opens /ws from the dashboard's origin with the given cookie and
// subprotocols and returns the status of the upgrade.
func wsDial(t *testing.T, h *harness, cookie string, protocols ...string) (int, *websocket.Conn) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", http.Header{"Cookie": {cookie}, "Origin": {h.url}})
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	if err == nil {
		t.Cleanup(func() { ws.Close() })
	}
	return resp.StatusCode, ws
}

// A stolen cookie (another local web server receives every 127.0.0.1
// cookie) opens nothing: /ws and sign-out need the second secret too.
func TestSessionCookieAloneIsRefused(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	cookie, secret := ownerLogin(t, h)
	jar := cookieName + "=" + cookie

	if code, _ := wsDial(t, h, jar); code != http.StatusUnauthorized {
		t.Errorf("/ws with the session cookie alone: %d, want 401", code)
	}
	if code, _ := wsDial(t, h, jar, "corral", "corral.secret.not-"+secret); code != http.StatusUnauthorized {
		t.Errorf("/ws with the cookie and a wrong secret: %d, want 401", code)
	}
	// Another session's secret does not fit this cookie.
	_, other := ownerLogin(t, h)
	if code, _ := wsDial(t, h, jar, "corral", "corral.secret."+other); code != http.StatusUnauthorized {
		t.Errorf("/ws with the cookie and another session's secret: %d, want 401", code)
	}
	code, ws := wsDial(t, h, jar, "corral", "corral.secret."+secret)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("/ws with cookie and secret: %d, want 101", code)
	}
	if ws.Subprotocol() != "corral" {
		t.Errorf("answered subprotocol %q, want corral (never the secret)", ws.Subprotocol())
	}
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.info"})
	var res struct {
		Result struct{ Client string }
		Error  any
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := ws.ReadJSON(&res); err != nil || res.Result.Client != "browser" {
		t.Errorf("session.info over the signed connection: %+v %v", res, err)
	}

	// Sign out with the cookie alone is refused; with the secret it works.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	logout := func(form url.Values) int {
		req, _ := http.NewRequest("POST", h.url+"/logout", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", jar)
		req.Header.Set("Origin", h.url)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := logout(nil); code != http.StatusForbidden {
		t.Errorf("logout with the cookie alone: %d, want 403", code)
	}
	if resp, _ := get(t, h.url+"/", "Cookie", jar); resp.StatusCode != 200 {
		t.Errorf("the session ended on a cookie-only sign-out: %d", resp.StatusCode)
	}
	if code := logout(url.Values{"secret": {secret}}); code != http.StatusSeeOther {
		t.Errorf("logout with the secret: %d, want 303", code)
	}
	if resp, _ := get(t, h.url+"/", "Cookie", jar); resp.StatusCode != 401 {
		t.Errorf("GET / after sign-out: %d", resp.StatusCode)
	}
}

// A paired device's cookie alone opens no /ws either.
func TestDeviceCookieAloneIsRefused(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	_, dev := pairPhone(t, h, "Kitchen phone")
	jar := deviceCookie + "=" + dev["token"]
	if code, _ := wsDial(t, h, jar); code != http.StatusUnauthorized {
		t.Errorf("/ws with the device cookie alone: %d, want 401", code)
	}
	if code, _ := wsDial(t, h, jar, "corral", "corral.secret."+h.srv.secretFor("session", dev["token"])); code != http.StatusUnauthorized {
		t.Errorf("/ws with the device cookie and a secret of the wrong kind: %d, want 401", code)
	}
	code, ws := wsDial(t, h, jar, "corral", "corral.secret."+dev["secret"])
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("/ws with device cookie and secret: %d", code)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.info"})
	ws.WriteMessage(websocket.TextMessage, b)
	var res struct{ Result struct{ Client string } }
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := ws.ReadJSON(&res); err != nil || res.Result.Client != "device:Kitchen phone" {
		t.Errorf("session.info as the device: %+v %v", res, err)
	}
}
