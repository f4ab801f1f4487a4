package main

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPHTTPSurvivesRestart: an MCP-over-HTTP client's session keeps
// working across a daemon restart. Before, the new daemon answered the
// session's id with 404 "session not found", and the Go, TypeScript and
// Python SDK clients do not start a new session by themselves: the agent
// app had to be restarted. Now the daemon knows the id was its own for
// this key and opens the session again.
func TestMCPHTTPSurvivesRestart(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "http")
	if res := callMCP(t, cs, "file_write", map[string]any{"path": "before.txt", "content": "1"}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	sid := cs.ID()
	restartServe(t, r)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "before.txt"}})
		cancel()
		if err != nil {
			t.Fatalf("call %d after the restart: %v", i, err)
		}
		if res.IsError || textOf(t, res) != "1" {
			t.Fatalf("call %d after the restart: %v %q", i, res.IsError, textOf(t, res))
		}
	}
	if cs.ID() != sid {
		t.Errorf("the session's id changed: %q, then %q", sid, cs.ID())
	}
	// And a second restart, with the tool list asked for.
	restartServe(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after a second restart: %v", err)
	}
}
