package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"corral/app/testkit/mcphttp"
	"corral/core/sandbox"
)

// mcpWrite2MiB posts a 2 MiB file_write over /mcp as key in session sid
// and returns the status, or the client's error once ctx ends. Its
// request id is path: a body the client gave up on may still be read
// and run once a place frees.
func mcpWrite2MiB(ctx context.Context, h *harness, key, sid, path string) (int, string, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": path, "method": "tools/call", "params": map[string]any{
		"name": "file_write", "arguments": map[string]any{"path": path, "content": strings.Repeat("x", 2<<20)}}})
	resp, body, err := mcphttp.Post(ctx, h.url, key, sid, string(b))
	if resp == nil {
		return 0, "", err
	}
	return resp.StatusCode, body, err
}

func mcpOpen(t *testing.T, h *harness, key string) string {
	t.Helper()
	return mcphttp.Open(t, h.url, key)
}

// TestMCPLargeBodiesTakeTheKeysPlaces (red team): a /ws frame over 1 MiB
// is read whole only with one of its key's 16 places, but an MCP over
// HTTP body was read whole at once: 128 concurrent 15 MiB file_write
// POSTs of one key took the daemon to 9.6 GB of RSS (the same over /ws:
// 1.4 GB). Now such a body takes one of the same places before it is
// read past 1 MiB; another key, and the owner, are not held up by it.
func TestMCPLargeBodiesTakeTheKeysPlaces(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nmax_message_bytes = 4194304\n")
	alice, bob := mcpOpen(t, h, aliceKey), mcpOpen(t, h, bobKey)
	share := h.srv.shareOf(sandbox.Caller{Client: "alice-agent"})
	var release []func()
	for range 16 {
		r, err := share.waiting.TakeBig(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		release = append(release, r)
	}
	// Every one of alice's places is taken: her large body waits.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	code, body, err := mcpWrite2MiB(ctx, h, aliceKey, alice, "held.txt")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("alice's 2 MiB body was read and answered (%d, %v: %.200s) while all 16 of her places were taken", code, err, body)
	}
	// Bob's large write is not held up by alice's places.
	ctx, cancel = context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if code, body, err := mcpWrite2MiB(ctx, h, bobKey, bob, "bob.txt"); err != nil || code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Errorf("bob's 2 MiB write while alice's places are taken: %d %v %.300s", code, err, body)
	}
	// A place given back lets alice's next one through.
	release[0]()
	if code, body, err := mcpWrite2MiB(ctx, h, aliceKey, alice, "now.txt"); err != nil || code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Errorf("alice's 2 MiB write with a place free: %d %v %.300s", code, err, body)
	}
	for _, r := range release[1:] {
		r()
	}
}
