// Package benchref holds what Corral's file.read benchmarks run beside
// Corral, so the in-process and the out-of-process benchmark measure
// against the same thing: Bare, a gorilla/websocket server that answers
// every request with one file's content and does nothing else (no
// authentication, policy or audit), and InFlight, the client loop that
// drives both.
//
// Guarantees: both sides are driven by InFlight with the same depth and
// the same params, and every answer must be at least 4 KiB, so an error
// answer never passes for a fast read.
//
// Not guaranteed: Bare is a yardstick, not a server: it neither bounds
// its goroutines nor looks at the request beyond its id. It is for
// benchmarks only; nothing in the daemon imports it.
package benchref

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
)

// Bare answers each request on its own goroutine with file's content, as
// file.read of "f.txt" would.
func Bare(file string) http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})
}

// Depth is how many calls InFlight keeps in flight.
const Depth = 32

// InFlight makes n file.read calls of params over c, Depth at a time,
// and returns the calls per second. Every answer must be at least 4 KiB.
func InFlight(ctx context.Context, c *client.Client, n int, params any) (float64, error) {
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan struct{}, Depth)
	go func() {
		for range n {
			work <- struct{}{}
		}
		close(work)
	}()
	var once sync.Once
	var failed error
	for range Depth {
		wg.Go(func() {
			for range work {
				raw, err := c.Call(ctx, "file.read", params)
				if err == nil && len(raw) < 4096 {
					err = fmt.Errorf("file.read answered %d bytes, want at least 4096", len(raw))
				}
				if err != nil {
					once.Do(func() { failed = err })
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), failed
}
