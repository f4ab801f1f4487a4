package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"corral/app/wire"
)

// TestFileReadTailOneCall: file.read takes tail (an extension) over /ws,
// and MCP's file_read with tail is that one call: one file.read event,
// where it used to be two calls and two events (the first to count the
// lines). tail with offset or limit is refused in file_read's words.
func TestFileReadTailOneCall(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	scope := filepath.Join(h.base, "alice")
	os.MkdirAll(scope, 0o755)
	os.WriteFile(filepath.Join(scope, "log.txt"), []byte("one\ntwo\nthree\nfour\nfive\n"), 0o644)

	r := rpcCall[wire.TextShape](t, alice, "file.read", m("path", "log.txt", "tail", 2))
	if r.Content != "four\nfive\n" || r.TotalLines != 5 || r.OutputLines != 2 {
		t.Errorf("file.read tail 2: %+v", r)
	}
	if ev := lastEvent(t, own.c, "file.read"); !strings.Contains(ev.Detail, "tail 2") {
		t.Errorf("event of a tail read: %+v", ev)
	}
	if ce := callErr(t, alice, "file.read", m("path", "log.txt", "tail", 2, "offset", 3)); ce.Data.Kind != "invalid_params" || ce.Message != "Give tail or offset/limit, not both." {
		t.Errorf("tail with offset: %+v", ce)
	}

	before := len(rpcCall[wire.Page](t, own.c, "audit.query", m("op", "file.read", "limit", 100)).Events)
	ws, code := mcpWS(t, h, aliceKey)
	if ws == nil {
		t.Fatalf("MCP over a WebSocket: %d", code)
	}
	mcpWSTrip(t, ws, mcpInitialize)
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	res := mcpWSTrip(t, ws, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"log.txt","tail":3}}}`)
	if got := fmtJSON(res); !strings.Contains(got, `three\nfour\nfive\n`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("file_read tail 3: %s", got)
	}
	after := len(rpcCall[wire.Page](t, own.c, "audit.query", m("op", "file.read", "limit", 100)).Events)
	if after-before != 1 {
		t.Errorf("file_read with tail made %d file.read events, want 1", after-before)
	}
}
