package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/testkit/poll"
	"github.com/gorilla/websocket"
)

// The owner's methods whose parameters are times (undo.client's since
// and until) refuse a value that is not one in a sentence naming the
// parameter, never in Go's words ("parsing time … as
// "2006-01-02T15:04:05Z07:00"", "Time.UnmarshalJSON: …").
func TestTimeParametersAreRefusedPolitely(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	owner := h.dial(ownerToken)
	const since, until = `Parameter "since" must be a time such as 2026-01-02T15:04:05Z.`, `Parameter "until" must be a time such as 2026-01-02T15:04:05Z.`
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{m("client", "alice-agent", "since", "yesterday"), since},
		{m("client", "alice-agent", "since", 12), since},
		{m("client", "alice-agent", "since", "2026-13-45T99:00:00Z"), since},
		{m("client", "alice-agent", "since", "2026-01-02T15:04:05Z", "until", "now"), until},
	} {
		if e := callErr(t, owner, "undo.client", c.params); e.Data.Kind != "invalid_params" || e.Message != c.want {
			t.Errorf("undo.client %v: %q (%s), want %q", c.params, e.Message, e.Data.Kind, c.want)
		}
	}
}

// One agent key's /ws connections share maxCallsPerClient places for
// calls at once: a connection that asks for image reads and never reads
// the answers holds them all (its answers wait for room), and the same
// key's other connection waits, while the owner and another agent are
// served. Without the shared bound, the key's 128 connections of 64
// calls each held eight thousand image answers (up to 13 MiB each).
func TestAgentCallsAreBoundedOverItsConnections(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 1, 1)))
	img.Write(make([]byte, 256<<10)) // an image of 256 KiB; only its header is read to know it
	os.MkdirAll(filepath.Join(h.base, "alice"), 0o700)
	if err := os.WriteFile(filepath.Join(h.base, "alice", "big.png"), img.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hog := h.raw(aliceKey) // never read
	go func() {
		for i := range 400 {
			if hog.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"file.read","params":{"path":"big.png"}}`, i)) != nil {
				return
			}
		}
	}()

	// Alice's other connection: once the hog holds every place, a call
	// waits for one, and cancelled says so.
	other := h.raw(aliceKey)
	// Long, for a loaded machine: the bound is on places, not time.
	i := 0
	poll.Eventually(t, time.Minute, func() bool {
		i++
		other.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session.info"}`, i))
		other.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`, i))
		other.SetReadDeadline(time.Now().Add(callWithin))
		_, msg, err := other.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Error *struct {
				Message string
				Data    struct{ Kind string }
			}
		}
		json.Unmarshal(msg, &v)
		if v.Error != nil && (v.Error.Data.Kind != "unavailable" || !strings.Contains(v.Error.Message, "other calls")) {
			t.Fatalf("alice's waiting call answered %s", msg)
		}
		return v.Error != nil
	}, "alice's other connection to wait (it was served throughout while her first held 64 image answers it did not read)")

	// Nobody else waits for alice's places.
	if r := rpcCall[map[string]any](t, h.dial(bobKey), "session.info", nil); r["client"] != "bob-agent" {
		t.Errorf("bob while alice's places are taken: %v", r)
	}
	if r := rpcCall[map[string]any](t, h.dial(ownerToken), "session.info", nil); r["role"] != "owner" {
		t.Errorf("the owner while alice's places are taken: %v", r)
	}
}
