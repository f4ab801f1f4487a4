package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
	"corral/core/audit"
	"corral/core/testkit/poll"
)

// denyReasonSetup makes a file outside every agent's folder, so reading it
// asks the owner, and returns its path.
func denyReasonSetup(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = t.TempDir()
	outside = filepath.Join(dir, "outside", "tax.txt")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	return dir, outside
}

// newestEvent returns the newest audit event of op on target.
func newestEvent(t *testing.T, h *harness, op, target string) audit.Event {
	t.Helper()
	p, err := h.store.Query(context.Background(), audit.Filter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Events {
		if e.Op == op && e.Target == target {
			return e
		}
	}
	t.Fatalf("no %s event on %s among %d", op, target, len(p.Events))
	return audit.Event{}
}

// TestDenyWithReason: the owner's sentence with a denial (approval.respond
// "reason") reaches the agent over the WebSocket and over MCP in its
// error, cleaned of control and format characters and cut; the audit row
// keeps it; an allow with a reason is refused; an answer without one (an
// old client) denies as before.
func TestDenyWithReason(t *testing.T) {
	t.Parallel()
	dir, outside := denyReasonSetup(t)
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)

	// Over the WebSocket.
	done := async(alice, "file.read", m("path", outside))
	a := own.requested()
	if ce := callErr(t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once", "reason", "fine")); ce.Data.Kind != "invalid_params" {
		t.Errorf("allow with a reason: %+v", ce)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once", "reason", "  use the share\nfolder instead\x1b[2J\u202e "))
	err := <-done
	ce, _ := err.(*client.Error)
	want := "The owner denied access to " + outside + `: use the share folder instead\x1b[2J\u202e.`
	if ce == nil || ce.Data.Kind != "denied" || ce.Message != want {
		t.Fatalf("agent's error %v, want %q", err, want)
	}
	ev := newestEvent(t, h, "file.read", outside)
	if ev.Decision != audit.Deny || ev.Answer != "deny_once" || !strings.Contains(ev.Detail, `owner's reason: use the share folder instead\x1b[2J\u202e`) || !strings.Contains(ev.Error, "use the share folder instead") {
		t.Errorf("audit row: %+v", ev)
	}

	// Without a reason (an old client): the sentence of before.
	done = async(alice, "file.read", m("path", outside))
	a = own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	if err := <-done; err == nil || err.Error() != "The owner denied access to "+outside+"." {
		t.Errorf("deny without a reason: %v", err)
	}

	// Over MCP: the tool's error text carries it, cut to 500 runes.
	code, sid, body := mcpPost(t, h, aliceKey, "", mcpInitialize)
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	type reply struct {
		code int
		body string
	}
	got := make(chan reply, 1)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "file_read", "arguments": map[string]any{"path": outside}}})
	go func() {
		code, _, body := mcpPost(t, h, aliceKey, sid, string(call))
		got <- reply{code, body}
	}()
	a = own.requested()
	long := "use the share folder instead " + strings.Repeat("x", 600)
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once", "reason", long))
	var r reply
	select {
	case r = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the MCP call is still blocked after Deny")
	}
	if !strings.Contains(r.body, `"isError":true`) || !strings.Contains(r.body, "The owner denied access to "+outside+": use the share folder instead xxx") || !strings.Contains(r.body, "(cut:") || strings.Contains(r.body, strings.Repeat("x", 501)) {
		t.Errorf("MCP tool error: %d %s", r.code, r.body)
	}

	// An asked command: the same sentence ends its refusal.
	hc := start(t, "[exec]\nask = true\n")
	ownC := hc.owner(t)
	done = async(hc.dial(aliceKey), "command.run", m("command", "rm -rf build"))
	a = ownC.requested()
	rpcCall[any](t, ownC.c, "approval.respond", m("id", a.ID, "decision", "deny_once", "reason", "run make clean instead"))
	if err := <-done; err == nil || err.Error() != "The owner did not allow running this command: run make clean instead." {
		t.Errorf("asked command denied with a reason: %v", err)
	}
	if ev := newestEvent(t, hc, "command.run", "rm -rf build"); !strings.Contains(ev.Detail, "owner's reason: run make clean instead") {
		t.Errorf("command's audit row: %+v", ev)
	}
}

// TestDenyWithReasonFromAPairedPhone: a paired phone's connection (the
// dashboard the phone opens) denies with a reason: the agent reads it,
// and the audit row says the phone answered and keeps the sentence.
func TestDenyWithReasonFromAPairedPhone(t *testing.T) {
	t.Parallel()
	dir, outside := denyReasonSetup(t)
	h := startIn(t, dir, "[server]\nlan = true\n")
	lan, err := h.srv.ListenLAN() // binds only; no traffic goes to the LAN address
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	defer lan.Close()
	code := rpcCall[struct{ Code string }](t, h.dial(ownerToken), "pairing.start", nil).Code
	resp, dev := pair(t, h, code, "Kitchen phone")
	if resp.StatusCode != 200 || dev["token"] == "" {
		t.Fatalf("pair: %d %v", resp.StatusCode, dev)
	}
	cookie := &http.Cookie{Name: deviceCookie, Value: dev["token"]}
	signed := &websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + dev["secret"]}}
	conn, _, err := signed.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}})
	if err != nil {
		t.Fatalf("device /ws: %v", err)
	}
	defer conn.Close()
	phone := wsCaller(t, conn)
	phone("approval.subscribe", nil)

	done := async(h.dial(aliceKey), "file.read", m("path", outside))
	var id string
	poll.Eventually(t, callWithin, func() bool {
		if p, _ := phone("approval.list", nil)["result"].(map[string]any)["pending"].([]any); len(p) == 1 {
			id, _ = p[0].(map[string]any)["id"].(string)
		}
		return id != ""
	}, "the question to reach the phone's approval.list")
	if v := phone("approval.respond", map[string]any{"id": id, "decision": "deny_once", "reason": "not from the laptop, please"}); v["error"] != nil {
		t.Fatalf("the phone's answer: %v", v["error"])
	}
	err = <-done
	if want := "The owner denied access to " + outside + ": not from the laptop, please."; err == nil || err.Error() != want {
		t.Errorf("agent's error %v, want %q", err, want)
	}
	if ev := newestEvent(t, h, "file.read", outside); ev.AnsweredBy != "device:Kitchen phone" || !strings.Contains(ev.Detail, "owner's reason: not from the laptop, please") {
		t.Errorf("audit row: %+v", ev)
	}
}
