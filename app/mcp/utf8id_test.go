package mcp

import (
	"encoding/json"
	"testing"
)

// TestNonUTF8LineAnsweredWithItsID: a request line that is JSON but not
// UTF-8 is refused with its own id, so the client waiting for that id
// (and `corral mcp`, which relays it over a WebSocket and holds the id
// as pending) gets its answer. Red team, live: the relay's file_write
// with the byte 0xff in its path was answered null and the call waited
// until the relay's input ended. It failed on the old code (id nil).
func TestNonUTF8LineAnsweredWithItsID(t *testing.T) {
	for line, want := range map[string]string{
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"file_write\",\"arguments\":{\"path\":\"w\xff.txt\"}}}": "7",
		"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\",\"params\":{\"a\":\"\xff\"}}":                                                   `"x"`,
		"\xff\xfe": "",
	} {
		var got json.RawMessage
		called := false
		msg := decode([]byte(line), func(id json.RawMessage, code int64, _ string) { got, called = id, true })
		if msg != nil || !called || string(got) != want {
			t.Errorf("%.40q: answered id %q (called %v), want %q", line, got, called, want)
		}
	}
}
