package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMCPBigBinaryRead: a file_read of 4 MiB with encoding=base64, the
// most file_read gives at once, through `corral mcp` (stdio) and POST
// /mcp: the bytes arrive whole and once, so the answer stays far under
// the 10 MiB a client takes in one message (it was 11.2 MB, the base64
// in both content and structuredContent, and the TypeScript SDK's stdio
// transport dropped it with the session).
func TestMCPBigBinaryRead(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	data := make([]byte, 4<<20)
	rand.Read(data)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := mcpClient(t, r, transport)
			name := "big-" + transport + ".bin"
			if res := callMCP(t, cs, "file_write", map[string]any{"path": name, "content": "x"}); res.IsError {
				t.Fatal(textOf(t, res))
			}
			// The owner puts the 4 MiB there (more than one WebSocket
			// message may carry to file_write).
			if err := os.WriteFile(filepath.Join(scopeFolder(t, r.home, name), name), data, 0o600); err != nil {
				t.Fatal(err)
			}
			res := callMCP(t, cs, "file_read", map[string]any{"path": name, "encoding": "base64"})
			if res.IsError {
				t.Fatal(textOf(t, res))
			}
			var text struct {
				Data   string
				Length int
			}
			if err := json.Unmarshal([]byte(textOf(t, res)), &text); err != nil {
				t.Fatal(err)
			}
			got, _ := base64.StdEncoding.DecodeString(text.Data)
			structured, _ := json.Marshal(res.StructuredContent)
			whole, _ := json.Marshal(res)
			t.Logf("the answer: %d bytes", len(whole))
			if !bytes.Equal(got, data) || text.Length != len(data) {
				t.Errorf("%d bytes came back (length %d), want the 4 MiB written", len(got), text.Length)
			}
			if bytes.Contains(structured, []byte(`"data"`)) {
				t.Errorf("the bytes are in structuredContent too: %.200s", structured)
			}
			if len(whole) > 6<<20 {
				t.Errorf("the answer is %d bytes; the 4 MiB in base64 once is 5.6 MB", len(whole))
			}
		})
	}
}
