package main

import (
	"bufio"
	"corral/app/testkit/mcphttp"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// loneSurrogateCall is a raw tools/call whose path holds a lone
// surrogate; no SDK client can send one (Go strings are UTF-8).
const loneSurrogateCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"caf\udcff.txt","content":"x"}}}`

// checkSurrogateAnswer wants a JSON-RPC -32602 for id 7.
func checkSurrogateAnswer(t *testing.T, transport string, answer []byte) {
	t.Helper()
	var v struct {
		ID    int
		Error *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(answer, &v); err != nil || v.ID != 7 || v.Error == nil || v.Error.Code != -32602 || !strings.Contains(v.Error.Message, "surrogate") {
		t.Errorf("%s: answer %s (%v), want error -32602", transport, answer, err)
	}
}

// MCP over HTTP and `corral mcp` over stdio refuse a path with a lone
// surrogate, as /ws does, instead of writing "caf\ufffd.txt".
func TestMCPRefusesLoneSurrogates(t *testing.T) {
	t.Parallel()
	r := startServe(t)

	// HTTP: a session first, then the call; the answer comes as an SSE
	// event or as JSON.
	sid := mcphttp.Open(t, r.url, r.agentKey)
	_, body := mcpPost(t, r, sid, loneSurrogateCall)
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			body = d
		}
	}
	checkSurrogateAnswer(t, "http", []byte(body))

	// stdio: initialize, then the call, one message per line.
	cmd := exec.Command(r.bin, "mcp")
	cmd.Env = r.agentEnv()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, loneSurrogateCall+"\n")
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("corral mcp closed stdout before answering")
			}
			if strings.Contains(string(line), `"id":7`) {
				checkSurrogateAnswer(t, "stdio", line)
				break wait
			}
		case <-timeout:
			t.Fatal("no answer from corral mcp")
		}
	}
	// Nothing was written under either transport.
	ls := exec.Command(r.bin, "call", "folder.list", `{"path":"."}`)
	ls.Env = r.agentEnv()
	b, err := ls.CombinedOutput()
	if err != nil || strings.Contains(string(b), "caf") {
		t.Errorf("folder after the refused writes: %v\n%s", err, b)
	}
}

// MCP over HTTP refuses a body that is not UTF-8, as /ws and stdio do:
// encoding/json would decode the byte 0xff in "caf\xff.txt" to U+FFFD and
// write "caf\ufffd.txt", another file than the one sent.
func TestMCPHTTPRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	sid := mcphttp.Open(t, r.url, r.agentKey)
	resp, body := mcpPost(t, r, sid, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"file_write\",\"arguments\":{\"path\":\"caf\xff.txt\",\"content\":\"x\"}}}")
	if !strings.Contains(body, "-32700") || !strings.Contains(body, "UTF-8") {
		t.Errorf("a body with the byte 0xff: %d %q, want a -32700 error that names UTF-8", resp.StatusCode, body)
	}
	ls := exec.Command(r.bin, "call", "folder.list", `{"path":"."}`)
	ls.Env = r.agentEnv()
	b, err := ls.CombinedOutput()
	if err != nil || strings.Contains(string(b), "caf") {
		t.Errorf("folder after the refused write: %v\n%s", err, b)
	}
}
