package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/sandbox"
)

// fakeServer is the server as the handler sees it: keys are callers
// named by the key, every call is recorded, and a call of "block" holds
// until its context ends.
type fakeServer struct {
	mu      sync.Mutex
	calls   []any // the params each call got
	started chan struct{}
	ended   chan error
}

func (f *fakeServer) Caller(_ context.Context, key string) (sandbox.Caller, bool) {
	if key == "" || key == "gone" {
		return sandbox.Caller{}, false
	}
	return sandbox.Caller{Client: key}, true
}

func (f *fakeServer) Call(ctx context.Context, _ sandbox.Caller, method string, params any, _ func(string)) (any, error) {
	f.mu.Lock()
	f.calls = append(f.calls, params)
	f.mu.Unlock()
	if a, ok := params.(wire.FolderArgs); ok && a.Path == "block" {
		close(f.started)
		<-ctx.Done()
		f.ended <- ctx.Err()
		return nil, ctx.Err()
	}
	if method != "folder.create" {
		return nil, errors.New("no such method here")
	}
	return wire.FolderResult{Path: params.(wire.FolderArgs).Path, Created: true}, nil
}

func (f *fakeServer) TakeBig(context.Context, sandbox.Caller) (func(), error) { return func() {}, nil }

// wait bounds what a test waits for; the test fails rather than hang.
const wait = 30 * time.Second

func secret(kind, credential string) string {
	return strings.Repeat("k", 10) + kind + credential // long enough for the 22 characters a session id keeps
}

// serve is h behind the gate the server puts before it: the bearer key
// names the caller.
func serve(t *testing.T, f *fakeServer, h *Handler) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		caller, ok := f.Caller(r.Context(), key)
		if !ok {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.Serve(w, r, caller, key)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func newFake() *fakeServer {
	return &fakeServer{started: make(chan struct{}), ended: make(chan error, 1)}
}

func post(t *testing.T, ctx context.Context, url, key, sid, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func open(t *testing.T, url, key string) string {
	t.Helper()
	code, sid, body := post(t, t.Context(), url, key, "", initialize)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q %s", code, sid, body)
	}
	post(t, t.Context(), url, key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

func folderCreate(path string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"folder_create","arguments":{"path":"` + path + `"}}}`
}

// TestToolArgumentsReachTheMethodTyped: a tool's arguments reach the
// server's Call as the wire value the tool decoded, not as JSON.
func TestToolArgumentsReachTheMethodTyped(t *testing.T) {
	f := newFake()
	url := serve(t, f, New(f, Options{Version: "test", MaxMessageBytes: 1 << 20, Secret: secret}))
	sid := open(t, url, "alice")
	code, _, body := post(t, t.Context(), url, "alice", sid, folderCreate("a/b"))
	if code != http.StatusOK || !strings.Contains(body, `\"created\":true`) && !strings.Contains(body, `"created":true`) {
		t.Fatalf("folder_create: %d %s", code, body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		t.Fatalf("calls: %#v", f.calls)
	}
	if a, ok := f.calls[0].(wire.FolderArgs); !ok || a.Path != "a/b" {
		t.Errorf("the method got %T %#v; want wire.FolderArgs{Path: \"a/b\"}", f.calls[0], f.calls[0])
	}
}

// TestSessionSurvivesARestart: a handler made anew with the same secret
// (the daemon restarted) takes a session id the old one handed to the
// same key, and no other key's or a made-up one.
func TestSessionSurvivesARestart(t *testing.T) {
	f := newFake()
	o := Options{Version: "test", MaxMessageBytes: 1 << 20, Secret: secret}
	sid := open(t, serve(t, f, New(f, o)), "alice")
	h := New(f, o)
	url := serve(t, f, h)
	if code, _, body := post(t, t.Context(), url, "bob", sid, folderCreate("x")); code != http.StatusNotFound {
		t.Errorf("alice's session id with bob's key: %d %s; want 404", code, body)
	}
	if code, _, body := post(t, t.Context(), url, "alice", "AAAA.AAAA", folderCreate("x")); code != http.StatusNotFound {
		t.Errorf("a made-up session id: %d %s; want 404", code, body)
	}
	code, _, body := post(t, t.Context(), url, "alice", sid, folderCreate("x"))
	if code != http.StatusOK || !strings.Contains(body, "created") {
		t.Fatalf("folder_create on the resumed session: %d %s", code, body)
	}
	if n := h.Sessions("alice"); n != 1 {
		t.Errorf("alice's sessions after the resume: %d, want 1", n)
	}
	if n := h.Sessions("bob"); n != 0 {
		t.Errorf("bob's sessions: %d, want 0", n)
	}
}

// TestSessionsPerKeyBounded: a key's new sessions beyond the bound close
// its idle ones; another key's are not touched.
func TestSessionsPerKeyBounded(t *testing.T) {
	f := newFake()
	h := New(f, Options{Version: "test", MaxMessageBytes: 1 << 20, Secret: secret})
	url := serve(t, f, h)
	open(t, url, "bob")
	for range MaxSessionsPerClient + 5 {
		open(t, url, "alice")
	}
	if n := h.Sessions("alice"); n != MaxSessionsPerClient {
		t.Errorf("alice holds %d sessions; want %d", n, MaxSessionsPerClient)
	}
	if n := h.Sessions("bob"); n != 1 {
		t.Errorf("bob holds %d sessions; want 1", n)
	}
}

// TestClientGoneCancelsTheCall: a POST whose client hangs up before the
// answer cancels its call.
func TestClientGoneCancelsTheCall(t *testing.T) {
	f := newFake()
	url := serve(t, f, New(f, Options{Version: "test", MaxMessageBytes: 1 << 20, Secret: secret}))
	sid := open(t, url, "alice")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(t, ctx, url, "alice", sid, folderCreate("block"))
	}()
	select {
	case <-f.started:
	case <-time.After(wait):
		t.Fatal("the call never started")
	}
	cancel()
	select {
	case err := <-f.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the call ended with %v; want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("the call went on after its client hung up")
	}
	<-done
}

func TestCallID(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`:   "7",
		`{"jsonrpc":"2.0","id":"x","method":"tools/call"}`: `"x"`,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:     "",
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`:      "",
		`{"jsonrpc":"2.0","id":3,"result":{}}`:             "",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`:       "",
		`not json`: "",
	} {
		if got := string(callID([]byte(body))); got != want {
			t.Errorf("callID(%s) = %q, want %q", body, got, want)
		}
	}
}

// TestCancelledParams: notifications/cancelled's params are the spec's
// names (moved from app/server's results_test).
func TestCancelledParams(t *testing.T) {
	b, err := json.Marshal(cancelled{RequestID: json.RawMessage(`1`), Reason: "gone"})
	if err != nil || string(b) != `{"reason":"gone","requestId":1}` {
		t.Errorf("cancelled encodes as %s (%v)", b, err)
	}
}
