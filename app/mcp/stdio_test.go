package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"corral/app/rpc"
)

// echoBackend answers every call with its params, as JSON.
type echoBackend struct{}

func (echoBackend) Call(_ context.Context, _ string, params any) (json.RawMessage, error) {
	return json.Marshal(params)
}

// lineSession runs an MCP server with LineTransport (lines of at most
// maxLine bytes) and returns a function that sends a line and one that
// reads the next answer.
func lineSession(t *testing.T, maxLine int) (send func(string), next func() map[string]any) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		NewServer(echoBackend{}, "test", Options{}).Run(ctx, &LineTransport{In: inR, Out: outW, MaxLine: maxLine})
		close(done)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	lines := bufio.NewReader(outR)
	send = func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next = func() map[string]any {
		t.Helper()
		type res struct {
			line string
			err  error
		}
		ch := make(chan res, 1)
		go func() { l, err := lines.ReadString('\n'); ch <- res{l, err} }()
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatalf("read: %v", r.err)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(r.line), &m); err != nil {
				t.Fatalf("answer %q: %v", r.line, err)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	return send, next
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestLineTransportSurvivesBadLines: each bad line is answered with a
// JSON-RPC error and the session goes on to answer the next request.
func TestLineTransportSurvivesBadLines(t *testing.T) {
	t.Parallel()
	send, next := lineSession(t, 1024)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{"this is not json", -32700, nil},
		{`{"jsonrpc":"2.0","id":2,"method":`, -32700, nil},
		{"\xff\xfe", -32700, nil},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, nil},
		{`{"id":4,"method":"ping"}`, -32600, float64(4)},
		{`{"jsonrpc":"1.0","id":"five","method":"ping"}`, -32600, "five"},
		{`"just a string"`, -32600, nil},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"a","content":"` + strings.Repeat("x", 2000) + `"}}}`, -32600, nil},
	} {
		send(c.line)
		m := next()
		if errorCode(m) != c.code || m["id"] != c.id {
			t.Errorf("%.40q: answered %v, want code %v id %v", c.line, m, c.code, c.id)
		}
	}
	send("")
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"a","content":"<b>&</b>"}}}`)
	m := next()
	if m["id"] != float64(7) || m["result"] == nil {
		t.Fatalf("the session did not go on: %v", m)
	}
}

// TestLineTransportKeepsHTMLCharacters: "<", ">" and "&" reach the client
// as themselves, not as \u003c and friends.
func TestLineTransportKeepsHTMLCharacters(t *testing.T) {
	t.Parallel()
	if got := string(unescapeHTML([]byte(`{"a":"\u003c\u003e\u0026 \\u003c \\\u0026 \u2028"}`))); got != `{"a":"<>& \\u003c \\& \u2028"}` {
		t.Fatalf("unescapeHTML: %s", got)
	}
}

// FuzzUnescapeHTML: undoing the HTML escapes never changes what the JSON
// means.
func FuzzUnescapeHTML(f *testing.F) {
	for _, s := range []string{"<a href='x&y'>", `\u003c`, `\`, "\u2028<\\>&\"", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(map[string]string{"s": s, s: "k"})
		if err != nil {
			return
		}
		u := unescapeHTML(b)
		var a, c map[string]string
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(u, &c); err != nil {
			t.Fatalf("unescaped %s: %v", u, err)
		}
		if len(a) != len(c) || a["s"] != c["s"] || a[s] != c[s] {
			t.Fatalf("%q: %v != %v", s, a, c)
		}
	})
}

// FuzzLineDecode: any line is either a message or answered with an error;
// nothing panics.
func FuzzLineDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[1]`, `{"id":{},"method":1}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `nul`, `{"jsonrpc":"2.0"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var out strings.Builder
		c := &lineConn{out: &out}
		msg := c.decode([]byte(s + " "))
		if msg != nil && out.Len() > 0 {
			t.Fatalf("%q both decoded and answered %q", s, out.String())
		}
		if out.Len() > 0 && !json.Valid([]byte(strings.TrimSpace(out.String()))) {
			t.Fatalf("%q answered with invalid JSON %q", s, out.String())
		}
	})
}

// rpcEchoBackend answers every call with its params, encoded as Corral's
// backends encode answers (rpc.Marshal: "<" stays "<").
type rpcEchoBackend struct{}

func (rpcEchoBackend) Call(_ context.Context, _ string, params any) (json.RawMessage, error) {
	return rpc.Marshal(params)
}

// TestLineTransportBigHTMLText: an answer carrying 256 KiB of "<", ">"
// and "&" twice (text and structuredContent) is one line of about 512 KiB,
// not the 3 MiB that \u003c escapes would make of it (a 4 MiB text would
// pass the 16 MiB line limit so), and comes back whole. 256 KiB is four
// times the reader's 64 KiB buffer, so the call's line is read in
// pieces; 1 MiB told no more and took 5 s under -race.
func TestLineTransportBigHTMLText(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		NewServer(rpcEchoBackend{}, "test", Options{}).Run(ctx, &LineTransport{In: inR, Out: outW})
		close(done)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	lines := bufio.NewReaderSize(outR, 64<<10)
	content := strings.Repeat("<&>", 256<<10/3)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"a","content":"` + content + `"}}}`
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(inW, call+"\n")
	}()
	got := make(chan string, 1)
	go func() {
		lines.ReadString('\n') // initialize's answer
		l, _ := lines.ReadString('\n')
		got <- l
	}()
	var line string
	select {
	case line = <-got:
	case <-time.After(2 * time.Minute): // a hang, not a speed check: -race on a loaded machine took 30 s
		t.Fatal("no answer")
	}
	if len(line) > 3*len(content) || strings.Contains(line, `\u003c`) {
		t.Fatalf("the answer is %d bytes for %d of content", len(line), len(content))
	}
	var m struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Result.Content) != 1 || !strings.Contains(m.Result.Content[0].Text, content) {
		t.Fatalf("the answer does not carry the content whole: %v %.200s", err, line)
	}
}
