package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// mcpWS opens MCP over a WebSocket on h's /mcp with key, as `corral mcp`
// does, and returns the connection and the status of the handshake.
func mcpWS(t *testing.T, h *harness, key string) (*websocket.Conn, int) {
	t.Helper()
	hd := http.Header{}
	hd.Set("Authorization", "Bearer "+key)
	ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/mcp", hd)
	if err != nil {
		if resp != nil {
			return nil, resp.StatusCode
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, resp.StatusCode
}

// mcpWSTrip sends one frame and returns the next answer frame (skipping
// notifications).
func mcpWSTrip(t *testing.T, ws *websocket.Conn, msg string) map[string]any {
	t.Helper()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	for {
		ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %s: %v", msg, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("frame %s: %v", b, err)
		}
		if _, ok := m["method"]; !ok {
			return m
		}
	}
}

// TestMCPOverWebSocket: the daemon serves MCP itself over a WebSocket on
// /mcp (what `corral mcp` relays its lines to, unchanged): one session a
// connection, tool calls as the key's agent, bad input answered and the
// session going on; a key rotated away is hung up at its next call, and
// a wrong key is refused before the upgrade. Before, /mcp had no
// WebSocket and `corral mcp` decoded and encoded every message itself.
func TestMCPOverWebSocket(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	if _, code := mcpWS(t, h, "wrong-key-wrong-key"); code != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d, want 401", code)
	}
	ws, code := mcpWS(t, h, aliceKey)
	if ws == nil {
		t.Fatalf("MCP over a WebSocket on /mcp: %d, want 101", code)
	}
	init := mcpWSTrip(t, ws, mcpInitialize)
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if res := mcpWSTrip(t, ws, `{"jsonrpc":"2.0","id":2,`); !strings.Contains(fmtJSON(res), `"code":-32700`) {
		t.Errorf("a frame that is not JSON: %v", res)
	}
	res := mcpWSTrip(t, ws, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`)
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "alice-agent") || strings.Contains(string(b), `"isError":true`) {
		t.Fatalf("session_info: %s", b)
	}

	// A key rotated away: its session is hung up at the next call.
	owner := h.dial(ownerToken)
	rpcCall[any](t, owner, "person.add", m("name", "Carol Ann"))
	added := rpcCall[addedAgent](t, owner, "agent.add", m("name", "carol-helper", "user", "carol-ann"))
	carol, _ := mcpWS(t, h, added.Key)
	mcpWSTrip(t, carol, mcpInitialize)
	carol.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	rpcCall[addedAgent](t, owner, "agent.rotate_key", m("name", "carol-helper"))
	carol.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`))
	for {
		carol.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := carol.ReadMessage()
		if err != nil {
			break // hung up
		}
		if strings.Contains(string(b), "carol-helper") && !strings.Contains(string(b), `"isError":true`) {
			t.Fatalf("a call with the rotated key was answered: %s", b)
		}
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
