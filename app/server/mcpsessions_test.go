package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"corral/app/mcpserve"
	"corral/app/testkit/mcphttp"
	"corral/core/sandbox"
	"corral/core/testkit/poll"
)

// mcpPost sends one MCP message to h's /mcp as key, in session sid ("":
// none), and returns the status, the session id the answer names and its
// body.
func mcpPost(t *testing.T, h *harness, key, sid, body string) (int, string, string) {
	t.Helper()
	resp, b, err := mcphttp.Post(t.Context(), h.url, key, sid, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b
}

const mcpInitialize = mcphttp.Initialize

// TestMCPSessionsPerKeyBounded: every initialize over /mcp used to keep
// a session for 30 minutes, however many one key opened (23,000 took the
// daemon from 36 MB to 330 MB). Now a key holds at most
// mcpserve.MaxSessionsPerClient; a new one closes the one idle longest, and the
// newest works. Another key's sessions are not touched.
func TestMCPSessionsPerKeyBounded(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	code, bobSID, _ := mcpPost(t, h, bobKey, "", mcpInitialize)
	if code != http.StatusOK || bobSID == "" {
		t.Fatalf("bob's initialize: %d, session %q", code, bobSID)
	}
	var first, last string
	for i := range 200 {
		code, sid, body := mcpPost(t, h, aliceKey, "", mcpInitialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize %d: %d, session %q: %s", i, code, sid, body)
		}
		if i == 0 {
			first = sid
		}
		last = sid
	}
	if n := h.srv.mcp.Sessions("alice-agent"); n > mcpserve.MaxSessionsPerClient || n > 16 {
		t.Errorf("after 200 initialize calls alice holds %d MCP sessions; want at most %d (and no more than 16)", n, mcpserve.MaxSessionsPerClient)
	}
	if n := h.srv.mcp.Sessions("bob-agent"); n != 1 {
		t.Errorf("bob's sessions after alice's 200: %d, want 1", n)
	}
	// The newest session works; the oldest was closed.
	if code, _, body := mcpPost(t, h, aliceKey, last, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code/100 != 2 {
		t.Fatalf("initialized on the newest session: %d %s", code, body)
	}
	code, _, body := mcpPost(t, h, aliceKey, last, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`)
	if code != http.StatusOK || !strings.Contains(body, "alice-agent") || strings.Contains(body, `"isError":true`) {
		t.Errorf("session_info on the newest session: %d %s", code, body)
	}
	// The oldest was closed to make room; presented again, it is opened
	// again (resumed, see TestMCPSessionResumedOnlyForItsKey) in place
	// of another idle one, and the bound holds.
	if code, _, body := mcpPost(t, h, aliceKey, first, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != http.StatusOK {
		t.Errorf("the oldest session after 200 more: %d %s, want it resumed", code, body)
	}
	if n := h.srv.mcp.Sessions("alice-agent"); n > mcpserve.MaxSessionsPerClient {
		t.Errorf("after a resume alice holds %d MCP sessions; want at most %d", n, mcpserve.MaxSessionsPerClient)
	}
	if code, _, body := mcpPost(t, h, bobKey, bobSID, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code/100 != 2 {
		t.Errorf("bob's session after alice's 200: %d %s", code, body)
	}
}

// TestMCPSessionsAllBusyRefused: when every session of a key has a
// request in progress (here a GET stream each), a new session is refused
// with 429 and a sentence rather than closing one in use; once a stream
// ends, a new session is taken again.
func TestMCPSessionsAllBusyRefused(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	var streams []*http.Response
	defer func() {
		for _, r := range streams {
			r.Body.Close()
		}
	}()
	for i := range mcpserve.MaxSessionsPerClient {
		code, sid, body := mcpPost(t, h, aliceKey, "", mcpInitialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize %d: %d %s", i, code, body)
		}
		if code, _, body := mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code/100 != 2 {
			t.Fatalf("initialized %d: %d %s", i, code, body)
		}
		req, _ := mcphttp.Request(t.Context(), http.MethodGet, h.url, aliceKey, sid, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream %d: %s", i, resp.Status)
		}
		streams = append(streams, resp)
	}
	code, _, body := mcpPost(t, h, aliceKey, "", mcpInitialize)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "MCP sessions") {
		t.Fatalf("initialize with %d sessions all streaming: %d %s; want 429 and a sentence", mcpserve.MaxSessionsPerClient, code, body)
	}
	// The owner and other keys are not shut out.
	if code, _, body := mcpPost(t, h, bobKey, "", mcpInitialize); code != http.StatusOK {
		t.Errorf("bob's initialize: %d %s", code, body)
	}
	// A stream ends: its session is idle, and gives way to a new one.
	streams[0].Body.Close()
	streams = streams[1:]
	poll.EventuallyNil(t, callWithin, func() error {
		if code, sid, body := mcpPost(t, h, aliceKey, "", mcpInitialize); code != http.StatusOK || sid == "" {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	}, "initialize to succeed after a stream ended")
}

// TestMCPCallsShareTheAgentsPlaces: an agent's calls over MCP over HTTP
// take places among its calls at once, as its /ws calls do; before, /mcp
// ran up to 128 more at once beside the 64 of /ws.
func TestMCPCallsShareTheAgentsPlaces(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	_, sid, _ := mcpPost(t, h, aliceKey, "", mcpInitialize)
	mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	places := h.srv.shareOf(sandbox.Caller{Client: "alice-agent"}).calls
	for range cap(places) {
		places <- struct{}{} // every place taken, as by 64 calls on /ws
	}
	done := make(chan string, 1)
	go func() {
		_, _, body := mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`)
		done <- body
	}()
	select {
	case body := <-done:
		t.Fatalf("an MCP call ran with all of alice's places taken: %s", body)
	case <-time.After(300 * time.Millisecond):
	}
	// Bob's calls have places of their own.
	if code, bsid, body := mcpPost(t, h, bobKey, "", mcpInitialize); code != http.StatusOK {
		t.Fatalf("bob: %d %s", code, body)
	} else {
		mcpPost(t, h, bobKey, bsid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if _, _, body := mcpPost(t, h, bobKey, bsid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`); !strings.Contains(body, "bob-agent") {
			t.Errorf("bob's session_info while alice's places are taken: %s", body)
		}
	}
	<-places // one call of alice's ends
	select {
	case body := <-done:
		if !strings.Contains(body, "alice-agent") {
			t.Errorf("alice's session_info once a place was free: %s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("alice's MCP call did not run once a place was free")
	}
	for len(places) > 0 {
		<-places
	}
}

// TestMCPSessionResumedOnlyForItsKey: a session the daemon no longer
// holds (here ended with DELETE; after a restart it is the same) is
// opened again when its own key presents its id, and works; the same id
// with another key, or an id Corral did not make, is not found.
func TestMCPSessionResumedOnlyForItsKey(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	code, sid, _ := mcpPost(t, h, aliceKey, "", mcpInitialize)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	req, _ := mcphttp.Request(t.Context(), http.MethodDelete, h.url, aliceKey, sid, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if n := h.srv.mcp.Sessions("alice-agent"); n != 0 {
		t.Fatalf("sessions after DELETE: %d", n)
	}
	if code, _, body := mcpPost(t, h, bobKey, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("alice's session id with bob's key: %d %s; want 404", code, body)
	}
	forged := "AAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA"
	if code, _, body := mcpPost(t, h, aliceKey, forged, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("a made-up session id: %d %s; want 404", code, body)
	}
	code, got, body := mcpPost(t, h, aliceKey, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_info","arguments":{}}}`)
	if code != http.StatusOK || !strings.Contains(body, "alice-agent") || strings.Contains(body, `"isError":true`) {
		t.Fatalf("session_info on the resumed session: %d %s", code, body)
	}
	if got != "" && got != sid {
		t.Errorf("the resumed session answered as %q, want %q", got, sid)
	}
	if n := h.srv.mcp.Sessions("alice-agent"); n != 1 {
		t.Errorf("alice's sessions after the resume: %d, want 1", n)
	}
	if n := h.srv.mcp.Sessions("bob-agent"); n != 0 {
		t.Errorf("bob's sessions: %d, want 0", n)
	}
}
