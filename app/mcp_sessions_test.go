package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/testkit/mcphttp"
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

// rawMCP posts one MCP message to r's /mcp with key in session sid
// ("": none) under ctx, and returns the response (its body unread).
func rawMCP(ctx context.Context, r *running, key, sid, body string) (*http.Response, error) {
	return mcphttp.Send(ctx, r.url, key, sid, body)
}

// TestMCPHTTPDroppedCallWithdrawsQuestion: an HTTP client that gives up
// on a call waiting for the owner's approval by closing its connection,
// without notifications/cancelled (the Python SDK 1.x never sends one),
// withdraws the question: the owner's surfaces drop it, a late Allow is
// refused, and nothing is written.
func TestMCPHTTPDroppedCallWithdrawsQuestion(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	owner := askedOwner(t, r)
	bg := context.Background()
	sid := mcphttp.Open(t, r.url, r.agentKey)
	target := filepath.Join(t.TempDir(), "dropped.txt")
	args, _ := json.Marshal(map[string]any{"path": target, "content": "should never land"})
	ctx, drop := context.WithCancel(bg)
	defer drop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := rawMCP(ctx, r, r.agentKey, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_write","arguments":`+string(args)+`}}`)
		if err == nil {
			io.Copy(io.Discard, resp.Body) // until the connection is dropped
			resp.Body.Close()
		}
	}()
	var id string
	for id == "" {
		n := <-owner.Notifications()
		var p struct {
			Approval struct{ ID, Target string }
		}
		json.Unmarshal(n.Params, &p)
		if n.Method == "approval.requested" && strings.HasSuffix(p.Approval.Target, "dropped.txt") {
			id = p.Approval.ID
		}
	}
	drop() // the client goes away: its connection closes, no notifications/cancelled
	<-done
	timeout := time.After(30 * time.Second)
	for resolved := false; !resolved; {
		select {
		case n := <-owner.Notifications():
			var p struct{ ID string }
			json.Unmarshal(n.Params, &p)
			resolved = n.Method == "approval.resolved" && p.ID == id
		case <-timeout:
			t.Fatal("the question was not withdrawn when the client's connection closed")
		}
	}
	if _, err := owner.Call(bg, "approval.respond", map[string]any{"id": id, "decision": "allow_once"}); err == nil {
		t.Error("a late allow_once was accepted")
	}
	var pending struct {
		Pending []struct{ ID string }
	}
	if err := owner.CallInto(bg, "approval.list", nil, &pending); err != nil {
		t.Fatal(err)
	}
	for _, a := range pending.Pending {
		if a.ID == id {
			t.Errorf("the question is still pending: %+v", pending)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the file was written: %v", err)
	}
	var ev auditEvent
	waitFor(t, 10*time.Second, "the cancelled event", func() bool {
		var ok bool
		ev, ok = lastEvent(t, owner, "file.write", "dropped.txt")
		return ok
	})
	if ev.Decision != "deny" || !strings.Contains(ev.Detail, "cancelled") {
		t.Fatalf("event: %+v", ev)
	}
}

// TestMCPTypeScriptClientSurvivesRestart: the official TypeScript SDK
// client's MCP-over-HTTP session keeps working across a daemon restart
// (before: 404 "session not found", and the client gave up).
func TestMCPTypeScriptClientSurvivesRestart(t *testing.T) {
	t.Parallel()
	node := nodeModules(t)
	script, err := os.ReadFile(filepath.Join("testdata", "mcp-node", "restart.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(script)
	js := filepath.Join(node, "restart-"+hex.EncodeToString(sum[:6])+".mjs")
	if err := os.WriteFile(js, script, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startServe(t)
	if res := callMCP(t, mcpClient(t, r, "http"), "file_write", map[string]any{"path": "ts.txt", "content": "kept"}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	cmd := exec.Command("node", js, r.url, r.agentKey, "ts.txt")
	cmd.Dir = node
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(outPipe)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("restart.mjs: %q\n%s", lines.Text(), stderr.String())
	}
	restartServe(t, r)
	io.WriteString(in, "go\n")
	if !lines.Scan() {
		t.Fatalf("restart.mjs ended: %s", stderr.String())
	}
	var out struct {
		Session, SessionAfter, Before, After, AfterError string
		Errors                                           []string
	}
	if err := json.Unmarshal(lines.Bytes(), &out); err != nil {
		t.Fatalf("restart.mjs output %q: %v", lines.Text(), err)
	}
	if out.Before != "kept" || out.After != "kept" || out.AfterError != "" {
		t.Fatalf("before the restart %q, after %q (error %q); errors %v", out.Before, out.After, out.AfterError, out.Errors)
	}
	if out.Session == "" || out.SessionAfter != out.Session {
		t.Errorf("session %q, after the restart %q", out.Session, out.SessionAfter)
	}
}
