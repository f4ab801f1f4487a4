package server

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
)

// BenchmarkMCPFileReadWS: file_read of a 4 KiB file through the daemon's
// own MCP server over a WebSocket on /mcp (what `corral mcp` relays to),
// 32 calls in flight, audit on. It reports the process's CPU time per
// call (client included): run it with -cpuprofile to see where the
// daemon's MCP time goes.
func BenchmarkMCPFileReadWS(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB
	h := start(b, unlimitedCalls)
	c := h.dial(aliceKey)
	if _, err := c.Call(context.Background(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
		b.Fatal(err)
	}
	ws, code := mcpWS(&testing.T{}, h, aliceKey)
	if ws == nil {
		b.Fatalf("no MCP over a WebSocket: %d", code)
	}
	defer ws.Close()
	ws.WriteMessage(websocket.TextMessage, []byte(mcpInitialize))
	if _, _, err := ws.ReadMessage(); err != nil {
		b.Fatal(err)
	}
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	const depth = 32
	var wmu sync.Mutex
	sent := 0
	send := func() {
		wmu.Lock()
		defer wmu.Unlock()
		sent++
		ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"f.txt"}}}`, sent+1))
	}
	b.ResetTimer()
	cpu := selfCPU()
	for range min(depth, b.N) {
		send()
	}
	for got := 0; got < b.N; {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(msg, []byte(`"result"`)) || bytes.Contains(msg, []byte(`"isError":true`)) {
			b.Fatalf("answer: %.300s", msg)
		}
		got++
		if sent < b.N {
			send()
		}
	}
	b.ReportMetric((selfCPU()-cpu).Seconds()/float64(b.N)*1e6, "cpu_µs/op")
}
