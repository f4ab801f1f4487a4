package main

import (
	"bufio"
	"corral/app/testkit/mcphttp"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restartServe stops r's daemon and starts it again on the same address
// and CORRAL_HOME, as an owner restarting Corral would.
func restartServe(t testing.TB, r *running) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	var stdout io.Reader
	r.cmd, stdout = serveCmd(t, r.bin, strings.TrimPrefix(r.url, "http://"), r.env, r.stderr)
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !regexp.MustCompile(`^corral: listening on `+regexp.QuoteMeta(r.url)+`\n$`).MatchString(first) {
		t.Fatalf("restart: %q %v\n%s", first, err, r.stderr.String())
	}
	go io.Copy(io.Discard, stdout)
}

// TestMCPStdioSurvivesRestart: `corral mcp` keeps serving after the daemon
// restarts; the call after the restart works.
func TestMCPStdioSurvivesRestart(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "stdio")
	if res := callMCP(t, cs, "file_write", map[string]any{"path": "before.txt", "content": "1"}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	restartServe(t, r)
	res := callMCP(t, cs, "file_read", map[string]any{"path": "before.txt"})
	if res.IsError || textOf(t, res) != "1" {
		t.Fatalf("after the restart: %v %q", res.IsError, textOf(t, res))
	}
}

// TestMCPStdioBigHTMLText: 4 MiB of "<" written through `corral mcp`
// reaches the file whole; escaped as \u003c the frame to the daemon would
// have been 24 MiB, past its 16 MiB limit.
func TestMCPStdioBigHTMLText(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "stdio")
	content := strings.Repeat("<", 4<<20)
	if res := callMCP(t, cs, "file_write", map[string]any{"path": "big.txt", "content": content}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	files, _ := filepath.Glob(filepath.Join(r.home, "sandbox", "*", "big.txt"))
	if len(files) != 1 {
		t.Fatalf("big.txt: %v", files)
	}
	if b, err := os.ReadFile(files[0]); err != nil || string(b) != content {
		t.Fatalf("big.txt holds %d bytes (%v)", len(b), err)
	}
	res := callMCP(t, cs, "file_read", map[string]any{"path": "big.txt"})
	if got := textOf(t, res); res.IsError || !strings.HasPrefix(got, strings.Repeat("<", 256<<10)) {
		t.Fatalf("file_read: %v %.80q", res.IsError, got)
	}
}

// TestMCPStdioSIGTERM: `corral mcp` exits promptly on SIGTERM, and the
// command it was forwarding is killed in the daemon.
func TestMCPStdioSIGTERM(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cmd := exec.Command(r.bin, "mcp")
	cmd.Env = r.agentEnv()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go io.Copy(io.Discard, out)
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"sleep 20.4721"}}}`+"\n")
	waitFor(t, 20*time.Second, "the sleep to start", func() bool { return len(sleepers("sleep", "20.4721")) > 0 })
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("corral mcp did not exit within 5 s of SIGTERM")
	}
	waitFor(t, 10*time.Second, "the sleep to be killed", func() bool { return len(sleepers("sleep", "20.4721")) == 0 })
}

// mcpPost posts one JSON-RPC message to r's /mcp as an agent and returns
// the response and its body.
func mcpPost(t *testing.T, r *running, session, body string) (*http.Response, string) {
	t.Helper()
	resp, b, err := mcphttp.Post(t.Context(), r.url, r.agentKey, session, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestMCPHTTPSessionAndUnknownMethod: /mcp hands out a session, answers
// an unknown method in it with JSON-RPC -32601, and refuses the session
// to another client's key.
func TestMCPHTTPSessionAndUnknownMethod(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	sid := mcphttp.Open(t, r.url, r.agentKey)
	resp, body := mcpPost(t, r, sid, `{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`)
	if !strings.Contains(body, `"code":-32601`) || !strings.Contains(body, `"id":2`) {
		t.Fatalf("unknown method: %d %q", resp.StatusCode, body)
	}
	// The owner's key with the agent's session: not found.
	resp, _, err := mcphttp.Post(t.Context(), r.url, r.ownerKey, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another client's session: %d", resp.StatusCode)
	}
}
