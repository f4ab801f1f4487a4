package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressClient is mcpClient whose progress notifications are collected.
func progressClient(t *testing.T, r *running, transport string) (*sdk.ClientSession, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, req.Params.Message)
	}}
	var tr sdk.Transport
	if transport == "stdio" {
		cmd := exec.Command(r.bin, "mcp")
		cmd.Env = r.agentEnv()
		tr = &sdk.CommandTransport{Command: cmd}
	} else {
		tr = &sdk.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{r.agentKey}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "progress-agent", Version: "1"}, opts).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// TestMCPProgress: a call with a progressToken gets notifications/progress
// with run_command's output lines as they come, and "waiting for the
// owner's answer" while a question is pending, over both transports.
func TestMCPProgress(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	owner := askedOwner(t, r)
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			cs, got := progressClient(t, r, name)
			p := &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done"}}
			p.SetProgressToken("tok-" + name)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, p)
			if err != nil || res.IsError {
				t.Fatalf("run_command: %v %v", err, res)
			}
			waitFor(t, 5*time.Second, "three output lines as progress", func() bool {
				return strings.Contains(strings.Join(got(), "\n"), "line3")
			})

			// A question to the owner: progress says so; then the owner allows.
			target := t.TempDir() + "/p.txt"
			go func() {
				for n := range owner.Notifications() {
					if n.Method == "approval.requested" && strings.Contains(string(n.Params), "p.txt") {
						var id struct{ Approval struct{ ID string } }
						jsonUnmarshal(n.Params, &id)
						owner.Call(context.Background(), "approval.respond", map[string]any{"id": id.Approval.ID, "decision": "allow_once"})
						return
					}
				}
			}()
			p = &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": target, "content": "x"}}
			p.SetProgressToken(7)
			res, err = cs.CallTool(ctx, p)
			if err != nil || res.IsError {
				t.Fatalf("file_write: %v %v", err, res)
			}
			// Notifications and the answer may travel apart: poll.
			waitFor(t, 5*time.Second, "progress saying Corral waits for the owner", func() bool {
				return strings.Contains(strings.Join(got(), "\n"), "Waiting for the owner's answer")
			})
		})
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
