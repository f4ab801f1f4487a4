package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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
