package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
)

// BenchmarkFileRead compares file.read of a 4 KiB file over one WebSocket
// connection with 32 requests in flight, audit on, against a bare
// gorilla/websocket server that only reads the same file and answers.
// Compare the ops/s metrics of the two sub-benchmarks (goal: corral ≥ 0.8×
// bare).
func BenchmarkFileRead(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB

	b.Run("bare", func(b *testing.B) {
		dir := b.TempDir()
		file := filepath.Join(dir, "f.txt")
		os.WriteFile(file, []byte(content), 0o644)
		url := bareServer(b, file)
		c, err := client.Dial(context.Background(), url, "unused")
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		inFlight(b, c, map[string]any{"path": "f.txt"})
	})

	b.Run("corral", func(b *testing.B) {
		h := start(b, "")
		c, err := client.Dial(context.Background(), h.url, aliceKey)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Call(context.Background(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
			b.Fatal(err)
		}
		inFlight(b, c, map[string]any{"path": "f.txt"})
	})
}

// inFlight runs b.N file.read calls with 32 in flight and reports ops/s.
func inFlight(b *testing.B, c *client.Client, params map[string]any) {
	const depth = 32
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan struct{}, depth)
	go func() {
		for i := 0; i < b.N; i++ {
			work <- struct{}{}
		}
		close(work)
	}()
	var failed sync.Once
	for range depth {
		wg.Go(func() {
			for range work {
				raw, err := c.Call(ctx, "file.read", params)
				if err != nil || len(raw) < 4096 {
					failed.Do(func() { b.Errorf("file.read: %v %d", err, len(raw)) })
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// bareServer is the reference: gorilla/websocket, each request answered
// on its own goroutine with the file's content and nothing else.
func bareServer(b *testing.B, file string) string {
	up := websocket.Upgrader{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var wmu sync.Mutex
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			go func() {
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				json.Unmarshal(data, &req)
				body, _ := os.ReadFile(file)
				out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"type": "text", "path": "f.txt", "content": string(body)}})
				wmu.Lock()
				ws.WriteMessage(websocket.TextMessage, out)
				wmu.Unlock()
			}()
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
