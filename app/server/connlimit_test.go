package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
	"corral/core/testkit/poll"
)

// One agent key cannot hold an unbounded number of /ws connections:
// 20,000 of them used up Corral's file descriptors, and the owner could
// then reach neither the dashboard nor `corral call` (nor could Corral
// open files). Past maxConnsPerClient the handshake is refused with 429
// and a sentence; another agent and the owner still connect, and a
// closed connection frees its place. MCP over HTTP requests count
// against the same bound.
func TestConnectionsPerAgentAreBounded(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	hdr := http.Header{"Authorization": {"Bearer " + aliceKey}}
	var open []*websocket.Conn
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	for range maxConnsPerClient {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", hdr)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", len(open)+1, maxConnsPerClient, err)
		}
		open = append(open, c)
	}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", hdr)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Fatalf("connection %d of one agent: err %v, status %d; want 429", maxConnsPerClient+1, err, code)
	}
	// MCP over HTTP counts too: a GET stream is held as long as a
	// WebSocket.
	req, _ := http.NewRequest(http.MethodPost, h.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("/mcp while alice holds %d connections: %s; want 429", maxConnsPerClient, resp.Status)
		}
	}
	// Others are not shut out.
	for _, key := range []string{bobKey, ownerToken} {
		c := h.dial(key)
		if _, err := c.Call(context.Background(), "session.info", nil); err != nil {
			t.Errorf("another caller while alice holds %d connections: %v", maxConnsPerClient, err)
		}
	}
	// Closing one frees a place (the server notices the close).
	open[0].Close()
	open = open[1:]
	poll.EventuallyNil(t, callWithin, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := client.Dial(ctx, h.url, aliceKey)
		if err == nil {
			c.Close()
		}
		return err
	}, "alice to connect after closing one connection")
}
