package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/app/client"
)

// A cookie does not tell ports apart: any other web server on this host
// (or a page it serves) can set corral_session or corral_device for
// 127.0.0.1 with a longer path, and the browser then sends it first.
// These tests plant one in front of the real cookie, as such a server
// would, and check that it neither locks the owner out nor makes Sign
// out answer as if it had worked while the login stays alive.

const planted = "planted-by-another-local-server"

// signOut posts the dashboard's (or the phone's) Sign out with the given
// Cookie header and second secret, not following the redirect.
func signOut(t *testing.T, h *harness, cookies, secret string) *http.Response {
	t.Helper()
	form := url.Values{"secret": {secret}}
	req, _ := http.NewRequest(http.MethodPost, h.url+"/logout", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.url)
	req.Header.Set("Cookie", cookies)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestPlantedSessionCookie(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	sid, secret := goLogin(t, h)
	both := planted + "; " + cookieName + "=" + sid // the planted one first
	if got := wsStatusAs(t, h, cookieName, both, secret); got != http.StatusSwitchingProtocols {
		t.Errorf("/ws with a planted cookie before the owner's: %d; want 101 (the owner is not locked out)", got)
	}
	if res := signOut(t, h, cookieName+"="+both, secret); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out with a planted cookie before the owner's: %d", res.StatusCode)
	}
	if got := wsStatus(t, h, sid, secret); got != http.StatusUnauthorized {
		t.Errorf("after Sign out answered as done: /ws with the login answered %d; want 401", got)
	}
	h = restart(t, h)
	if got := wsStatus(t, h, sid, secret); got != http.StatusUnauthorized {
		t.Errorf("a signed-out login after a restart: /ws answered %d; want 401", got)
	}
}

// pairPhone pairs a device named name through a LAN listener (skipping
// the test where the machine has no LAN address) and returns the owner's
// connection and POST /pair's answer.
func pairPhone(t *testing.T, h *harness, name string) (*client.Client, map[string]string) {
	t.Helper()
	owner := h.dial(ownerToken)
	lan, err := h.srv.ListenLAN() // binds only; no traffic goes to the LAN address
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	t.Cleanup(func() { lan.Close() })
	code := rpcCall[struct{ Code string }](t, owner, "pairing.start", nil)
	resp, dev := pair(t, h, code.Code, name)
	if resp.StatusCode != 200 || dev["secret"] == "" {
		t.Fatalf("pair: %d %v", resp.StatusCode, dev)
	}
	return owner, dev
}

func TestPlantedDeviceCookie(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	owner, dev := pairPhone(t, h, "Hall phone")
	both := planted + "; " + deviceCookie + "=" + dev["token"]
	if got := wsStatusAs(t, h, deviceCookie, both, dev["secret"]); got != http.StatusSwitchingProtocols {
		t.Errorf("/ws with a planted cookie before the phone's: %d; want 101", got)
	}
	res := signOut(t, h, deviceCookie+"="+both, dev["secret"])
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/pair" {
		t.Fatalf("the phone's sign out with a planted cookie first: %d to %q; want 303 to /pair", res.StatusCode, res.Header.Get("Location"))
	}
	if got := wsStatusAs(t, h, deviceCookie, dev["token"], dev["secret"]); got != http.StatusUnauthorized {
		t.Errorf("after the phone signed out: /ws answered %d; want 401 (revoked)", got)
	}
	list := rpcCall[struct{ Devices []struct{ ID string } }](t, owner, "device.list", nil)
	if len(list.Devices) != 0 {
		t.Errorf("after the phone signed out the computer still lists %d devices", len(list.Devices))
	}
}
