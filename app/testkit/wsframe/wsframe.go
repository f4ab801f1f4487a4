// Package wsframe is for tests that speak to Corral's WebSocket at the
// level of frames: RoundTrip sends one frame as written and decodes the
// one answer, so a test can send what no client would (a binary frame,
// broken JSON, a huge id). It is for tests only, over loopback.
package wsframe

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Within is how long RoundTrip waits for the answer: long, for a loaded
// machine; an answer that comes returns at once.
const Within = 20 * time.Second

// RoundTrip writes frame as a message of kind (websocket.TextMessage,
// BinaryMessage…) on c, reads the next message and returns it decoded as
// a JSON object. It fails t (Fatal) when a write or read fails, no
// answer comes within Within, or the answer is not a JSON object.
func RoundTrip(t testing.TB, c *websocket.Conn, kind int, frame string) map[string]any {
	t.Helper()
	if err := c.WriteMessage(kind, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(Within))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("after %q: %v", frame, err)
	}
	var v map[string]any
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatalf("answer %q: %v", msg, err)
	}
	return v
}
