package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/wire"
)

func pair(t *testing.T, h *harness, code, name string) (*http.Response, map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"code": code, "name": name})
	resp, err := http.Post(h.url+"/pair", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]string
	json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func TestPairingEndToEnd(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	owner := h.dial(ownerToken)
	if ce := callErr(t, owner, "pairing.start", nil); ce.Data.Kind != "unavailable" {
		t.Fatalf("pairing before the LAN listener: %+v", ce)
	}
	lan, err := h.srv.ListenLAN() // binds only; no traffic goes to the LAN address
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	defer lan.Close()
	start := rpcCall[struct {
		URL, Code, ExpiresAt string
		QR                   []string
	}](t, owner, "pairing.start", nil)
	if !strings.Contains(start.URL, "/pair?code="+start.Code) || len(start.QR) < 21 || len(start.QR[0]) != len(start.QR) {
		t.Fatalf("pairing.start: %+v", start)
	}
	// The pairing page escapes the code and carries a strict CSP.
	resp, body := get(t, h.url+"/pair?code=%3Cb%3E")
	if resp.StatusCode != 200 || strings.Contains(body, "<b>") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("pair page: %d %s", resp.StatusCode, body)
	}
	resp, dev := pair(t, h, start.Code, "Kitchen phone")
	if resp.StatusCode != 200 || dev["token"] == "" || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly {
		t.Fatalf("pair: %d %v %v", resp.StatusCode, dev, resp.Cookies())
	}
	if resp, _ := pair(t, h, start.Code, "Second try"); resp.StatusCode != 403 {
		t.Errorf("spent code: %d", resp.StatusCode)
	}
	expired := rpcCall[struct{ Code string }](t, owner, "pairing.start", nil)
	h.clock.Shift(6 * time.Minute)
	if resp, _ := pair(t, h, expired.Code, "Late"); resp.StatusCode != 403 {
		t.Errorf("expired code: %d", resp.StatusCode)
	}
	h.clock.Shift(0)

	// The device's cookie opens /ws with the owner's approval abilities.
	cookie := &http.Cookie{Name: deviceCookie, Value: dev["token"]}
	ws := "ws" + strings.TrimPrefix(h.url, "http") + "/ws"
	signed := &websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + dev["secret"]}}
	conn, _, err := signed.Dial(ws, http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}})
	if err != nil {
		t.Fatalf("device /ws: %v", err)
	}
	defer conn.Close()
	rt := wsCaller(t, conn)
	if v := rt("session.info", nil); v["result"].(map[string]any)["client"] != "device:Kitchen phone" {
		t.Errorf("device session.info: %v", v)
	}
	for _, meth := range []string{"rule.revoke", "links.rotate", "file.write", "pairing.start", "device.list", "session.login", "command.cancel"} {
		v := rt(meth, map[string]any{})
		e, _ := v["error"].(map[string]any)
		if e == nil || e["data"].(map[string]any)["kind"] != "forbidden" {
			t.Errorf("device calling %s: %v", meth, v)
		}
	}
	// An approval answered from the device unblocks the agent.
	rt("approval.subscribe", nil)
	alice := h.dial(aliceKey)
	done := async(alice, "file.stat", m("path", "/etc/hostname"))
	var approvalID string
	for approvalID == "" {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var n struct {
			Method string
			Params struct{ Approval wire.Approval }
		}
		json.Unmarshal(msg, &n)
		if n.Method == "approval.requested" {
			approvalID = n.Params.Approval.ID
		}
	}
	if v := rt("approval.respond", map[string]any{"id": approvalID, "decision": "allow_once"}); v["error"] != nil {
		t.Fatalf("device answer: %v", v)
	}
	if err := <-done; err != nil {
		t.Fatalf("agent after the device allowed: %v", err)
	}

	// Pairing left its trail in the audit log.
	for _, op := range []string{"pairing.start", "device.pair"} {
		ev := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", op))
		if len(ev.Events) == 0 {
			t.Errorf("no %s event", op)
		}
	}
	devices := rpcCall[struct{ Devices []map[string]any }](t, owner, "device.list", nil)
	if len(devices.Devices) != 1 || devices.Devices[0]["name"] != "Kitchen phone" {
		t.Fatalf("device.list: %+v", devices)
	}
	rpcCall[any](t, owner, "device.revoke", m("id", devices.Devices[0]["id"]))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := conn.ReadMessage()
		if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
			t.Fatal("the revoked device's connection is still open")
		}
		if err != nil {
			break // closed by the revocation
		}
	}
	if _, resp, err := signed.Dial(ws, http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}}); err == nil || resp.StatusCode != 401 {
		t.Errorf("revoked device still connects: %v", resp)
	}
}

func TestPairingRateLimit(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	codes := 0
	for i := 0; i < 5+2; i++ { // five tries a minute per address (app/pairing)
		resp, _ := pair(t, h, "wrong-code", "x")
		if resp.StatusCode == http.StatusTooManyRequests {
			codes++
		} else if resp.StatusCode != 403 {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
	}
	if codes != 2 {
		t.Errorf("rate-limited answers: %d, want 2", codes)
	}
}

// LAN requests are judged by their remote address; these go through the
// handler directly, so no packet leaves the loopback.
func TestLANRequestsNeedAPairedDevice(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	owner := h.dial(ownerToken)
	login := rpcCall[map[string]string](t, owner, "session.login", nil)
	for _, tc := range []struct {
		path, cookie string
		want         int
	}{
		{"/healthz", "", 200},
		{"/pair?code=x", "", 200},
		{"/files/out?path=a&token=b", "", 403},
		{"/", "", 401},
		{"/ws", "", 401},
		{"/mcp", "", 401},
		{strings.TrimPrefix(login["url"], h.url), "", 401}, // login codes stay loopback-only
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Host = "127.0.0.1"
		req.RemoteAddr = "192.168.1.20:40000"
		rec := httptest.NewRecorder()
		h.srv.http.Handler.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("LAN %s: %d, want %d", tc.path, rec.Code, tc.want)
		}
	}
}

// POST /pair from another site is refused with the server's own Origin
// check (auth.go sameOrigin), and spends neither the code nor a try: the
// page's own POST, or one from public_url, still pairs with it.
func TestPairRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\npublic_url = \"https://corral.example\"\n")
	code, _ := h.srv.pair.NewCode(h.clock.Now())
	post := func(origin string) (*http.Response, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"code": code, "name": "phone"})
		req, _ := http.NewRequest("POST", h.url+"/pair", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	own := strings.TrimPrefix(h.url, "http://")
	for _, origin := range []string{"https://evil.example", "null", "https://" + own, "http://127.0.0.1:1", "https://corral.example.evil", "http://corral.example"} {
		if resp, body := post(origin); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Cross-site request refused.") {
			t.Errorf("Origin %s: %d %q", origin, resp.StatusCode, body)
		}
	}
	if resp, body := post("https://corral.example"); resp.StatusCode != http.StatusOK {
		t.Errorf("the public URL's own POST: %d %q", resp.StatusCode, body)
	}
}
