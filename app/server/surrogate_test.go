package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"corral/app/testkit/wsframe"
)

// A path with a lone surrogate names no file: /ws refuses it with -32602
// instead of writing "caf\ufffd.txt".
func TestWSRefusesLoneSurrogates(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	c := h.raw(aliceKey)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"file.write","params":{"path":"caf\udcff.txt","content":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"file.write","params":{"path":"a.txt","content":"x\ud83d"}}`,
	} {
		v := wsframe.RoundTrip(t, c, websocket.TextMessage, frame)
		e, _ := v["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "surrogate") {
			t.Errorf("%s: %v", frame, v)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(h.base, "alice"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "caf") || e.Name() == "a.txt" {
			t.Errorf("a refused write made %q", e.Name())
		}
	}
	// A pair is one character and works.
	v := wsframe.RoundTrip(t, c, websocket.TextMessage, `{"jsonrpc":"2.0","id":2,"method":"file.write","params":{"path":"\ud83d\ude00.txt","content":"x"}}`)
	if v["error"] != nil {
		t.Errorf("surrogate pair: %v", v)
	}
	if _, err := os.Stat(filepath.Join(h.base, "alice", "😀.txt")); err != nil {
		t.Error(err)
	}
}
