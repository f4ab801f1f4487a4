// Package mcphttp is the HTTP side of an MCP client for tests of
// Corral's /mcp endpoint (the Streamable HTTP transport): one request at
// a time, with the headers a client sends, so each test says only what
// it posts and checks what comes back. It is for tests only; the real
// clients are the MCP SDKs the conformance tests run.
package mcphttp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// ProtocolVersion is the MCP protocol version the requests name.
const ProtocolVersion = "2025-06-18"

// Initialize and Initialized are a client's first two messages: the
// request that opens a session and the notification that it is ready.
const (
	Initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	Initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// Request is a request of method (POST, GET, DELETE) to base+"/mcp" as
// key (a bearer token) in session sid ("" for none, as initialize is
// sent: then no session headers), with body (nil for none). A POST
// says it sends JSON and takes JSON or an event stream; a GET takes an
// event stream.
func Request(ctx context.Context, method, base, key, sid string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+"/mcp", body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", ProtocolVersion)
	}
	return req, nil
}

// Send posts one MCP message (body) and returns the response, its body
// unread: the caller closes it.
func Send(ctx context.Context, base, key, sid, body string) (*http.Response, error) {
	req, err := Request(ctx, http.MethodPost, base, key, sid, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// Post posts one MCP message (body) and returns the response with its
// body read whole and closed.
func Post(ctx context.Context, base, key, sid, body string) (*http.Response, string, error) {
	resp, err := Send(ctx, base, key, sid, body)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// Open opens a session as a client does (Initialize, then Initialized)
// and returns its id; t fails (Fatal) unless initialize answers 200 with
// a session id and initialized is taken (2xx).
func Open(t testing.TB, base, key string) string {
	t.Helper()
	resp, body, err := Post(t.Context(), base, key, "", Initialize)
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d session %q %s", resp.StatusCode, sid, body)
	}
	if resp, body, err = Post(t.Context(), base, key, sid, Initialized); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %v %v %s", err, resp, body)
	}
	return sid
}
