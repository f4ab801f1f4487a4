package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// pushPair serves /ws connections that only push (no requests), over a
// real WebSocket on loopback, and hands the test each server-side conn.
func pushPair(t *testing.T) (dial func() *websocket.Conn, conns chan *conn) {
	t.Helper()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	conns = make(chan *conn, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := &conn{s: s, ws: ws, done: make(chan struct{}), send: make(chan frame, sendQueue)}
		c.ctx, c.cancel = context.WithCancel(context.Background())
		go c.writeLoop()
		conns <- c
	}))
	t.Cleanup(ts.Close)
	return func() *websocket.Conn {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}, conns
}

// A client that stops reading is dropped once its queue is full, while a
// client that reads gets every push; pushing never waits for either (the
// loop below would hang on the slow client otherwise).
func TestSlowClientIsDroppedOthersKeepTheirPushes(t *testing.T) {
	t.Parallel()
	dial, conns := pushPair(t)
	_ = dial() // never read
	slow := <-conns
	fastWS := dial()
	fast := <-conns

	payload := strings.Repeat("x", 16<<10)
	const max = 100_000 // far more than the socket buffers and the queue hold
	got := make(chan int)
	go func() {
		n := 0
		for {
			fastWS.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, _, err := fastWS.ReadMessage(); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	start := time.Now()
	sent := 0
	for sent < max && slow.notify("test.push", payload) {
		if !fast.notify("test.push", payload) {
			t.Fatal("the reading client was dropped")
		}
		sent++
	}
	if sent == max {
		t.Fatalf("the client that does not read was never dropped after %d pushes", sent)
	}
	if d := time.Since(start); d >= writeWait {
		t.Errorf("pushing took %v: a push waited for the slow client's write deadline (%v)", d, writeWait)
	}
	select {
	case <-slow.done:
	default:
		t.Fatal("the slow connection is not finished")
	}
	// The fast client goes on getting pushes after the slow one is gone.
	for range 10 {
		if !fast.notify("test.push", payload) {
			t.Fatal("the reading client was dropped")
		}
		sent++
	}
	fast.goingAway.Store(true) // send what is queued, then close
	fast.finish()
	if n := <-got; n != sent {
		t.Fatalf("the reading client got %d pushes, want %d", n, sent)
	}
}

// $/cancelRequest reaches a call in flight on the same connection: a read
// waiting for the owner's answer is withdrawn (the owner sees it resolved)
// and the connection goes on answering.
func TestCancelReachesACallInFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside", "tax.pdf")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := alice.Call(ctx, "file.read", m("path", outside))
		done <- err
	}()
	a := own.requested()
	cancel() // the client sends $/cancelRequest for the call's id
	var res struct{ ID, Decision string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.ID != a.ID || res.Decision == "" {
		t.Fatalf("approval.resolved after the cancel: %+v, want %s withdrawn", res, a.ID)
	}
	<-done
	if _, err := alice.Call(context.Background(), "file.write", m("path", "after.txt", "content", "x")); err != nil {
		t.Fatalf("a call after the cancel: %v", err)
	}
}

// Many calls in flight on one connection each get their own answer,
// whole: answers of different sizes share the one writer and the pooled
// buffers (run with -race).
func TestAnswersArriveWhole(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	want := map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("f%d.txt", i)
		want[name] = strings.Repeat(string(rune('a'+i)), 1<<(8+i)) // 256 B to 32 KiB
		rpcCall[any](t, alice, "file.write", m("path", name, "content", want[name]))
	}
	var wg sync.WaitGroup
	for i := range 200 {
		name := fmt.Sprintf("f%d.txt", i%8)
		wg.Go(func() {
			var res struct{ Content string }
			if err := alice.CallInto(context.Background(), "file.read", m("path", name), &res); err != nil {
				t.Error(err)
				return
			}
			if res.Content != want[name] {
				t.Errorf("%s: got %d bytes, want %d", name, len(res.Content), len(want[name]))
			}
		})
	}
	wg.Wait()
}
