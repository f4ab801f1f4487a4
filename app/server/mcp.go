package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/mcp"
	"corral/app/rpc"
	"corral/core/policy"
	"corral/core/sandbox"
)

// Invoke runs one method as caller, outside any connection (MCP over
// HTTP). Methods that need a connection (subscriptions) are refused.
func (s *Server) Invoke(ctx context.Context, caller sandbox.Caller, method string, params json.RawMessage) (any, error) {
	return s.run(ctx, method, &call{caller: caller, params: params})
}

// mcpBackend adapts Invoke to the MCP tools.
type mcpBackend struct {
	s      *Server
	caller sandbox.Caller
}

type kindError struct{ e *rpc.Error }

func (k kindError) Error() string { return k.e.Message }
func (k kindError) Kind() string {
	if k.e.Data == nil {
		return ""
	}
	return k.e.Data.Kind
}

func (b mcpBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c := &call{caller: b.caller, params: raw}
	if report := mcp.Progress(ctx); report != nil {
		ctx = policy.WithWaiting(ctx, func(a policy.Approval) { report(waitingMessage(a)) })
		c.output = func(_ string, data []byte) { report(strings.TrimSuffix(string(data), "\n")) }
	}
	res, err := b.s.run(ctx, method, c)
	if err != nil {
		return nil, kindError{rpc.FromError(err)}
	}
	return rpc.Marshal(res) // as /ws writes it: a URL's "&" stays "&"
}

// mcpServers holds one MCP server per authenticated client, and which
// client opened each MCP session: a session id is a bearer secret of its
// own, but it never works for another client's key.
type mcpServers struct {
	mu       sync.Mutex
	servers  map[string]*sdk.Server
	sessions map[string]string // Mcp-Session-Id → client
	handler  http.Handler
}

// mcpSessionIdle closes an MCP session after this long without a request.
const mcpSessionIdle = 30 * time.Minute

// mcpHandler serves MCP over streamable HTTP with sessions
// (Mcp-Session-Id), SSE responses and the GET stream, so that progress
// notifications reach the client and notifications/cancelled reaches the
// call it names. A POST whose client goes away before its answer cancels
// the call as notifications/cancelled would.
func (s *Server) mcpHandler() http.Handler {
	ms := &mcpServers{servers: map[string]*sdk.Server{}, sessions: map[string]string{}}
	ms.handler = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		caller, _ := r.Context().Value(callerKey{}).(sandbox.Caller)
		ms.mu.Lock()
		defer ms.mu.Unlock()
		srv, ok := ms.servers[caller.Client]
		if !ok {
			srv = mcp.NewServer(mcpBackend{s: s, caller: caller}, s.version, mcp.Options{ActsForOthers: caller.Owner || len(caller.ActFor) > 0})
			ms.servers[caller.Client] = srv
		}
		return srv
	}, &sdk.StreamableHTTPOptions{
		SessionTimeout:             mcpSessionIdle,
		DisableLocalhostProtection: true, // guard checks Host against our own allowlist
		MaxRequestBodyBytes:        s.cfg.Server.MaxMessageBytes,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r, s.cfg.Server.PublicURL) {
			http.Error(w, "Cross-origin request refused.", http.StatusForbidden)
			return
		}
		tok, ok := bearer(r)
		var caller sandbox.Caller
		if ok {
			if caller, ok = s.id.fromBearer(tok); ok {
				s.touchAgent(r.Context(), caller)
			}
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
			http.Error(w, "Authentication required: send Authorization: Bearer <key>.", http.StatusUnauthorized)
			return
		}
		if !caller.Owner {
			// /mcp requests (a GET stream lasts as long as the agent
			// wants) count against the same bound as /ws connections.
			if !s.holdConn(caller.Client) {
				http.Error(w, fmt.Sprintf("%s already has %d connections open, the most one agent may hold; close one first.", caller.Client, maxConnsPerClient), http.StatusTooManyRequests)
				return
			}
			defer s.releaseConn(caller.Client)
		}
		sid := r.Header.Get("Mcp-Session-Id")
		if sid != "" {
			ms.mu.Lock()
			owner, known := ms.sessions[sid]
			if r.Method == http.MethodDelete && owner == caller.Client {
				delete(ms.sessions, sid)
			}
			ms.mu.Unlock()
			if known && owner != caller.Client {
				http.Error(w, "Session not found.", http.StatusNotFound)
				return
			}
		}
		var id json.RawMessage
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.Server.MaxMessageBytes))
			if err != nil {
				http.Error(w, "The request body is too large or could not be read.", http.StatusRequestEntityTooLarge)
				return
			}
			if !utf8.Valid(body) {
				// JSON is UTF-8; decoded, a stray byte would become U+FFFD
				// and a path would name another file (as /ws and stdio refuse).
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(rpc.Fail(nil, &rpc.Error{Code: rpc.CodeParse, Message: "The message is not valid UTF-8 JSON."}))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			id = callID(body)
		}
		// The body is in: an answer may take as long as the call (a
		// command, the owner's approval) and the GET stream lasts, so the
		// server's ReadTimeout, meant for slow bodies, must not end it.
		http.NewResponseController(w).SetReadDeadline(time.Time{})
		ctx := context.WithValue(r.Context(), callerKey{}, caller)
		rec := &sessionRecorder{ResponseWriter: w, hold: id != nil}
		ms.handler.ServeHTTP(rec, r.WithContext(ctx))
		rec.release(id)
		if sid != "" && rec.code == http.StatusNotFound {
			ms.mu.Lock()
			delete(ms.sessions, sid) // ended (idle, deleted): forget it
			ms.mu.Unlock()
		}
		if rec.session != "" && sid == "" {
			ms.mu.Lock()
			ms.sessions[rec.session] = caller.Client
			ms.mu.Unlock()
		}
		if id != nil && sid != "" && r.Context().Err() != nil {
			ms.cancel(context.WithoutCancel(ctx), r, sid, id)
		}
	})
}

// cancel tells session sid that the client of call id has gone, as a
// notifications/cancelled from it would: the call stops (a command is
// killed, a question to the owner withdrawn). A call that has answered
// is not affected.
func (ms *mcpServers) cancel(ctx context.Context, orig *http.Request, sid string, id json.RawMessage) {
	body, err := rpc.Notify("notifications/cancelled", mcpCancelled{RequestID: id, Reason: "The HTTP request closed before the answer."})
	if err != nil {
		return
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, orig.URL.String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	if v := orig.Header.Get("Mcp-Protocol-Version"); v != "" {
		r.Header.Set("Mcp-Protocol-Version", v)
	}
	ms.handler.ServeHTTP(discard{}, r)
}

// callID is the id of the one request in an MCP POST body, or nil for a
// notification, a response, a batch or anything else.
func callID(body []byte) json.RawMessage {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil
	}
	return m.ID
}

// sessionRecorder notes the Mcp-Session-Id a response hands out, and
// with hold keeps back a 400 so that release can answer a call of an
// unknown method as JSON-RPC says (-32601) rather than in plain text, as
// the SDK does for protocol versions before 2026-07-28.
type sessionRecorder struct {
	http.ResponseWriter
	session string
	code    int
	hold    bool
	held    *bytes.Buffer
}

func (r *sessionRecorder) WriteHeader(code int) {
	if r.code != 0 {
		return
	}
	r.code = code
	r.session = r.Header().Get("Mcp-Session-Id")
	if r.hold && code == http.StatusBadRequest {
		r.held = &bytes.Buffer{}
		return
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *sessionRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.held != nil {
		return r.held.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// release writes what was held back: for a call of a method the server
// does not have, a JSON-RPC error answering id; otherwise the SDK's 400.
func (r *sessionRecorder) release(id json.RawMessage) {
	if r.held == nil {
		return
	}
	h := r.ResponseWriter.Header()
	if strings.HasPrefix(r.held.String(), "JSON RPC not handled") {
		h.Set("Content-Type", "application/json")
		r.ResponseWriter.WriteHeader(http.StatusOK)
		r.ResponseWriter.Write(rpc.Fail(id, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "Corral's MCP server has no such method."}))
		return
	}
	r.ResponseWriter.WriteHeader(r.code)
	r.ResponseWriter.Write(r.held.Bytes())
}

func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *sessionRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discard is a ResponseWriter for requests made on a client's behalf.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

type callerKey struct{}
