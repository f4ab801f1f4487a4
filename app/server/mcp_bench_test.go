package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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

// BenchmarkMCPFileReadHTTP: file_read of a 4 KiB file over MCP over
// streamable HTTP (one session, 32 POSTs in flight), audit on, with the
// process's CPU time per call; run with -cpuprofile to see where /mcp's
// time goes.
func BenchmarkMCPFileReadHTTP(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB
	h := start(b, unlimitedCalls)
	c := h.dial(aliceKey)
	if _, err := c.Call(context.Background(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	_, sid, _ := mcpPost(t, h, aliceKey, "", mcpInitialize)
	mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 64
	var next atomic.Int64
	b.ResetTimer()
	cpu := selfCPU()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				code, _, body := mcpPost(t, h, aliceKey, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"f.txt"}}}`, i+1))
				if code != http.StatusOK || strings.Contains(body, `"isError":true`) {
					b.Errorf("answer %d: %.300s", code, body)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric((selfCPU()-cpu).Seconds()/float64(b.N)*1e6, "cpu_µs/op")
}
