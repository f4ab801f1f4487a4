package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/client"
	"corral/core/testkit/poll"
)

// sleepers lists the pids of processes whose command line is exactly
// argv (searched in /proc, so sandboxed ones are found too).
func sleepers(argv ...string) []string {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Equal(b, want) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, d, cond, "%s", what)
}

// ownerClient connects to r as the owner.
func ownerClient(t *testing.T, r *running) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, r.url, r.ownerKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// askedOwner is ownerClient subscribed to approvals: the daemon has
// someone to ask, so a call that needs an answer waits for it.
func askedOwner(t *testing.T, r *running) *client.Client {
	t.Helper()
	c := ownerClient(t, r)
	if _, err := c.Call(t.Context(), "approval.subscribe", nil); err != nil {
		t.Fatal(err)
	}
	return c
}

type auditEvent struct {
	Op, Target, Decision, Detail, Error string
	DecidedBy                           string `json:"decided_by"`
}

// lastEvent is the newest audit event of op whose target contains target.
func lastEvent(t *testing.T, c *client.Client, op, target string) (auditEvent, bool) {
	t.Helper()
	var res struct{ Events []auditEvent }
	if err := c.CallInto(context.Background(), "audit.query", map[string]any{"op": op, "text": target}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Events) == 0 {
		return auditEvent{}, false
	}
	return res.Events[0], true
}

// TestMCPCancelCommand: a run_command the client gives up on (a context
// timeout, which the SDK client turns into notifications/cancelled) is
// killed in the daemon with its process tree, over both transports, and
// the audit event says cancelled.
func TestMCPCancelCommand(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	owner := ownerClient(t, r)
	for i, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			cs := mcpClient(t, r, name)
			secs := []string{"20.4711", "20.4712"}[i] // a command line no other test runs
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep " + secs + " & wait"}})
			if err == nil {
				t.Fatal("the call answered before its timeout")
			}
			waitFor(t, 10*time.Second, "the sleep to be killed", func() bool { return len(sleepers("sleep", secs)) == 0 })
			var ev auditEvent
			// The event is there from the start ("running") and is
			// completed when the command has ended.
			waitFor(t, 10*time.Second, "the cancelled event", func() bool {
				var ok bool
				ev, ok = lastEvent(t, owner, "command.run", "sleep "+secs)
				return ok && !strings.HasSuffix(ev.Detail, "running")
			})
			if !strings.Contains(ev.Detail, "cancelled") {
				t.Fatalf("event: %+v", ev)
			}
			// The session goes on.
			if res := callMCP(t, cs, "session_info", map[string]any{}); res.IsError {
				t.Fatalf("session_info after a cancel: %s", textOf(t, res))
			}
		})
	}
}

// TestMCPCancelApproval: a call waiting for the owner's answer that the
// client gives up on withdraws the question from the owner's surfaces; a
// late Allow does nothing and nothing is written.
func TestMCPCancelApproval(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	owner := askedOwner(t, r)
	outside := t.TempDir()
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			cs := mcpClient(t, r, name)
			target := filepath.Join(outside, name+".txt")
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": target, "content": "should never land"}})
				done <- err
			}()
			var id string
			for id == "" {
				n := <-owner.Notifications()
				var p struct {
					Approval struct{ ID, Target string }
				}
				json.Unmarshal(n.Params, &p)
				if n.Method == "approval.requested" && strings.HasSuffix(p.Approval.Target, name+".txt") {
					id = p.Approval.ID
				}
			}
			if err := <-done; err == nil {
				t.Fatal("the call answered although nobody answered the question")
			}
			for {
				n := <-owner.Notifications()
				var p struct{ ID, By string }
				json.Unmarshal(n.Params, &p)
				if n.Method == "approval.resolved" && p.ID == id {
					break
				}
			}
			_, err := owner.Call(context.Background(), "approval.respond", map[string]any{"id": id, "decision": "allow_once"})
			if err == nil {
				t.Error("a late allow_once was accepted")
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Fatalf("the file was written: %v", err)
			}
			var ev auditEvent
			waitFor(t, 10*time.Second, "the cancelled event", func() bool {
				var ok bool
				ev, ok = lastEvent(t, owner, "file.write", name+".txt")
				return ok
			})
			if ev.Decision != "deny" || !strings.Contains(ev.Detail, "cancelled") {
				t.Fatalf("event: %+v", ev)
			}
		})
	}
}
