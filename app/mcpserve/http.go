// Package mcpserve is MCP over HTTP, /mcp: the streamable-HTTP handler
// (sessions with Mcp-Session-Id, SSE answers, the GET stream) and, on a
// WebSocket upgrade of the same path, the relay `corral mcp` speaks, one
// JSON-RPC message a frame (ws.go). The tools are app/mcp's; the calls
// they make go to the server's method table (Server.Call) as the typed
// values the tools decoded, with no JSON between the tool and the method.
//
// An MCP session id is signed for the key that opened it, so a session
// the daemon no longer holds (a restart, idle, closed to make room) is
// opened again for that key alone (resume). Each key holds at most
// MaxSessionsPerClient sessions; a POST whose client goes away cancels
// its call as notifications/cancelled would.
//
// The server checks the origin, authenticates the request and takes one
// of the key's connection places before Serve; what the handler needs of
// it beyond is the small Server interface.
package mcpserve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/mcp"
	"corral/app/rpc"
	"corral/app/wsrpc"
	"corral/core/sandbox"
)

// Server is what MCP over HTTP needs of Corral's server.
type Server interface {
	// Caller is who holds key now, false for a key that no longer works;
	// an agent is noted as seen.
	Caller(ctx context.Context, key string) (sandbox.Caller, bool)
	// Call runs method of the method table as caller. params are the
	// tool's arguments as they were decoded, the wire type the method
	// declares (app/wire), taken as they are; the result is the method's
	// value before it is encoded. progress, when not nil, gets lines of
	// progress (command output, a wait for the owner's answer).
	Call(ctx context.Context, caller sandbox.Caller, method string, params any, progress func(string)) (any, error)
	// TakeBig takes one of an agent's places for large messages, shared
	// with its /ws connections (wsrpc.Waiting.TakeBig).
	TakeBig(ctx context.Context, caller sandbox.Caller) (release func(), err error)
}

// Options are the handler's settings.
type Options struct {
	Version         string        // Corral's version, the MCP server's
	CommandTimeout  time.Duration // exec.timeout (mcp.Options)
	MaxMessageBytes int64         // the largest request body or frame
	// Secret MACs a credential of a kind under a key derived from the
	// owner token (the server's second secrets); it signs session ids.
	Secret func(kind, credential string) string
	Now    func() time.Time
}

// backend runs the MCP tools' methods as caller, outside any /ws
// connection (methods that need one, subscriptions, are refused): the
// tool's arguments go to the method as they were decoded.
type backend struct {
	srv    Server
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

func (b backend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := b.CallValue(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return rpc.Marshal(res) // as /ws writes it: a URL's "&" stays "&"
}

// CallValue is Call's result before it is encoded (mcp.ValueBackend).
func (b backend) CallValue(ctx context.Context, method string, params any) (any, error) {
	res, err := b.srv.Call(ctx, b.caller, method, params, mcp.Progress(ctx))
	if err != nil {
		return nil, kindError{rpc.FromError(err)}
	}
	return res, nil
}

// Handler holds one MCP server per authenticated client, and which
// client opened each MCP session: a session id is a bearer secret of its
// own, but it never works for another client's key.
//
// Each key holds at most MaxSessionsPerClient sessions. A new session
// beyond that closes the key's session idle the longest (no request in
// progress, a GET stream counting as one); when every one of them is in
// use the new one is refused (429) rather than let one key's sessions
// grow without bound (23,000 initialize calls took 300 MB). A session
// idle for SessionIdle is closed by the SDK.
type Handler struct {
	srv      Server
	o        Options
	mu       sync.Mutex
	servers  map[string]*sdk.Server
	resumed  map[*sdk.Server]resumed  // the servers made to resume one session each (see resume)
	resuming map[string]chan struct{} // session id → closed when its resume is over
	sessions map[string]*mcpSession   // Mcp-Session-Id → who opened it, when last used
	opening  map[string]int           // client → new sessions being opened now
	handler  http.Handler
	now      func() time.Time
}

// mcpSession is what Handler knows of one session.
type mcpSession struct {
	client string
	used   time.Time // when its last request began or ended
	active int       // its requests in progress
}

const (
	// SessionIdle closes an MCP session after this long without a request.
	SessionIdle = 30 * time.Minute
	// MaxSessionsPerClient bounds the MCP sessions one key holds: an
	// agent app needs one, a few while it restarts.
	MaxSessionsPerClient = 16
)

// prune forgets client's sessions that its server no longer has (closed
// idle by the SDK, deleted, or never initialised). ms.mu is held.
func (ms *Handler) prune(client string) {
	live := map[string]bool{}
	for _, ss := range ms.live(client) {
		live[ss.ID()] = true
	}
	for sid, e := range ms.sessions {
		if e.client == client && !live[sid] {
			delete(ms.sessions, sid)
		}
	}
}

// count is how many sessions client holds now.
func (ms *Handler) count(client string) int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.prune(client)
	n := 0
	for _, e := range ms.sessions {
		if e.client == client {
			n++
		}
	}
	return n
}

// open makes room for a new session of client: it closes the sessions
// idle longest while client would hold more than the bound, and says
// false when all of them are in use. After a true, opened must follow.
func (ms *Handler) open(client string) bool {
	ms.mu.Lock()
	ms.prune(client)
	var mine []string
	for sid, e := range ms.sessions {
		if e.client == client {
			mine = append(mine, sid)
		}
	}
	var victims []string
	for n := len(mine) + ms.opening[client]; n >= MaxSessionsPerClient; n-- {
		oldest := ""
		for _, sid := range mine {
			e, ok := ms.sessions[sid]
			if ok && e.active == 0 && (oldest == "" || e.used.Before(ms.sessions[oldest].used)) {
				oldest = sid
			}
		}
		if oldest == "" {
			ms.mu.Unlock()
			return false
		}
		delete(ms.sessions, oldest)
		victims = append(victims, oldest)
	}
	ms.opening[client]++
	var live []*sdk.ServerSession
	if len(victims) > 0 {
		live = ms.live(client)
	}
	ms.mu.Unlock()
	for _, ss := range live {
		if slices.Contains(victims, ss.ID()) {
			ss.Close() // idle: nothing in progress to wait for
		}
	}
	return true
}

// live lists the sessions client's servers hold, and forgets the servers
// made to resume a session once that session has ended. ms.mu is held.
func (ms *Handler) live(client string) []*sdk.ServerSession {
	var out []*sdk.ServerSession
	if srv := ms.servers[client]; srv != nil {
		for ss := range srv.Sessions() {
			out = append(out, ss)
		}
	}
	for srv, rs := range ms.resumed {
		if rs.client != client {
			continue
		}
		n := 0
		for ss := range srv.Sessions() {
			out = append(out, ss)
			n++
		}
		if n == 0 && ms.resuming[rs.sid] == nil {
			delete(ms.resumed, srv)
		}
	}
	return out
}

// resumed is what Handler knows of a server made to resume a session.
type resumed struct{ client, sid string }

// An MCP session id Corral hands out is random text, a dot and a MAC of
// the text and the client under a key derived from the owner token
// (sessionMAC). So a daemon that no longer holds a session (it
// restarted, or closed the session idle or to make room) still knows an
// id it handed to this client, and opens that session again (resume)
// rather than answer 404: no SDK client starts a new session by itself,
// so the agent app would need a restart. An id presented with another
// client's key, or made up, is not resumed.
func (ms *Handler) sessionID(client string) string {
	r := rand.Text()
	return r + "." + ms.sessionMAC(client, r)
}

func (ms *Handler) sessionMAC(client, r string) string {
	return ms.o.Secret("mcp-session", client+"\x00"+r)[:22]
}

// sessionOurs says whether sid is an id sessionID made for client.
func (ms *Handler) sessionOurs(client, sid string) bool {
	r, mac, ok := strings.Cut(sid, ".")
	return ok && r != "" && hmac.Equal([]byte(mac), []byte(ms.sessionMAC(client, r)))
}

// resumeKey carries, on the initialize that resume makes, the server
// that opens the resumed session.
type resumeKey struct{}

// resume opens session sid of caller again, when none of the client's
// servers holds it: a server of its own whose one session id is sid
// (newServer) is initialized as the client did at first, with the
// protocol version the client's request names, so the request goes on
// as if the session had never ended. Only one resume of an id runs at
// once; others wait for it. It says false when the session could not be
// opened: busy when every other session of the key is in use (the
// bound of open).
func (ms *Handler) resume(ctx context.Context, caller sandbox.Caller, orig *http.Request, sid string, newServer func(sid string) *sdk.Server) (ok, busy bool) {
	held := func() bool {
		for _, ss := range ms.live(caller.Client) {
			if ss.ID() == sid {
				return true
			}
		}
		return false
	}
	ms.mu.Lock()
	if held() {
		ms.mu.Unlock()
		return true, false
	}
	if ch := ms.resuming[sid]; ch != nil {
		ms.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, false
		}
		ms.mu.Lock()
		defer ms.mu.Unlock()
		return held(), false
	}
	ch := make(chan struct{})
	ms.resuming[sid] = ch
	ms.mu.Unlock()
	defer func() {
		ms.mu.Lock()
		delete(ms.resuming, sid)
		ms.mu.Unlock()
		close(ch)
	}()
	if !ms.open(caller.Client) {
		return false, true
	}
	srv := newServer(sid)
	ms.mu.Lock()
	ms.resumed[srv] = resumed{client: caller.Client, sid: sid}
	ms.mu.Unlock()
	version := orig.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = "2025-03-26" // what the spec says a server assumes without the header
	}
	ctx = context.WithValue(context.WithValue(context.WithoutCancel(ctx), callerKey{}, caller), resumeKey{}, srv)
	post := func(sid string, msg any) (*statusRecorder, error) {
		body, err := json.Marshal(msg)
		if err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, orig.URL.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Mcp-Protocol-Version", version)
		}
		w := &statusRecorder{header: http.Header{}}
		ms.handler.ServeHTTP(w, r)
		return w, nil
	}
	type initParams struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    struct{}       `json:"capabilities"`
		ClientInfo      map[string]any `json:"clientInfo"`
	}
	w, err := post("", map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": initParams{ProtocolVersion: version, ClientInfo: map[string]any{"name": "resumed", "version": "0"}}})
	got := ""
	if err == nil && w.code == http.StatusOK {
		got = w.header.Get("Mcp-Session-Id")
	}
	if got == sid {
		_, err = post(sid, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	}
	ok = got == sid && err == nil
	if got != "" {
		ms.opened(caller.Client, got)
	} else {
		ms.opened(caller.Client, "")
	}
	return ok, false
}

// statusRecorder keeps the status and headers of a request made on a
// client's behalf; the body is dropped.
type statusRecorder struct {
	header http.Header
	code   int
}

func (w *statusRecorder) Header() http.Header { return w.header }
func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(b), nil
}

// opened ends what open began: sid is the new session ("" when none was
// made).
func (ms *Handler) opened(client, sid string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.opening[client]--; ms.opening[client] <= 0 {
		delete(ms.opening, client)
	}
	if sid != "" {
		ms.sessions[sid] = &mcpSession{client: client, used: ms.now()}
	}
}

// begin notes a request on session sid of client: known is false for a
// session Handler does not know, mine false for another client's.
func (ms *Handler) begin(sid, client string) (e *mcpSession, mine bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	e = ms.sessions[sid]
	if e == nil {
		return nil, true
	}
	if e.client != client {
		return nil, false
	}
	e.active++
	e.used = ms.now()
	return e, true
}

// end notes the end of a request that begin noted.
func (ms *Handler) end(e *mcpSession) {
	if e == nil {
		return
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	e.active--
	e.used = ms.now()
}

// forget drops session sid of client (deleted, or ended).
func (ms *Handler) forget(sid, client string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if e := ms.sessions[sid]; e != nil && e.client == client {
		delete(ms.sessions, sid)
	}
}

// Sessions is how many MCP sessions client holds now.
func (ms *Handler) Sessions(client string) int { return ms.count(client) }

// New returns the handler of /mcp, whose tools call srv.
func New(srv Server, o Options) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	ms := &Handler{srv: srv, o: o, servers: map[string]*sdk.Server{}, sessions: map[string]*mcpSession{}, opening: map[string]int{},
		resumed: map[*sdk.Server]resumed{}, resuming: map[string]chan struct{}{}, now: o.Now}
	ms.handler = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if srv, ok := r.Context().Value(resumeKey{}).(*sdk.Server); ok {
			return srv
		}
		caller, _ := r.Context().Value(callerKey{}).(sandbox.Caller)
		ms.mu.Lock()
		defer ms.mu.Unlock()
		srv, ok := ms.servers[caller.Client]
		if !ok {
			srv = ms.newServer(caller, func() string { return ms.sessionID(caller.Client) })
			ms.servers[caller.Client] = srv
		}
		return srv
	}, &sdk.StreamableHTTPOptions{
		SessionTimeout:             SessionIdle,
		DisableLocalhostProtection: true, // the server checks Host against its own allowlist
		MaxRequestBodyBytes:        o.MaxMessageBytes,
	})
	return ms
}

// newServer is the MCP server of one client's sessions.
func (ms *Handler) newServer(caller sandbox.Caller, sessionID func() string) *sdk.Server {
	return mcp.NewServer(backend{srv: ms.srv, caller: caller}, ms.o.Version, ms.mcpOptions(caller, sessionID))
}

func (ms *Handler) mcpOptions(caller sandbox.Caller, sessionID func() string) mcp.Options {
	return mcp.Options{ActsForOthers: caller.Owner || len(caller.ActFor) > 0, CommandTimeout: ms.o.CommandTimeout, SessionID: sessionID}
}

// Serve serves MCP over streamable HTTP with sessions (Mcp-Session-Id),
// SSE responses and the GET stream, so that progress notifications
// reach the client and notifications/cancelled reaches the call it
// names, or over a WebSocket when r asks for one (serveWebSocket). A
// POST whose client goes away before its answer cancels the call as
// notifications/cancelled would. The server has checked r's origin,
// authenticated it as caller with key, and holds one of the key's
// connection places until Serve returns.
func (ms *Handler) Serve(w http.ResponseWriter, r *http.Request, caller sandbox.Caller, key string) {
	if r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r) {
		ms.serveWebSocket(w, r, caller, key)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	rec := &sessionRecorder{ResponseWriter: w}
	if sid != "" {
		e, mine := ms.begin(sid, caller.Client)
		if !mine {
			http.Error(w, "Session not found.", http.StatusNotFound)
			return
		}
		if e == nil && r.Method != http.MethodDelete && ms.sessionOurs(caller.Client, sid) {
			// Not held (the daemon restarted, or closed it): open it again.
			ok, busy := ms.resume(r.Context(), caller, r, sid, func(sid string) *sdk.Server {
				return ms.newServer(caller, func() string { return sid })
			})
			if busy {
				tooMany(w, caller.Client)
				return
			}
			if ok {
				e, _ = ms.begin(sid, caller.Client)
			}
		}
		defer ms.end(e)
		if r.Method == http.MethodDelete {
			ms.forget(sid, caller.Client)
		}
	} else if r.Method == http.MethodPost {
		// A POST without a session opens one.
		if !ms.open(caller.Client) {
			tooMany(w, caller.Client)
			return
		}
		defer func() { ms.opened(caller.Client, rec.session) }()
	}
	var id json.RawMessage
	if r.Method == http.MethodPost {
		body, release, err := ms.readBody(w, r, caller)
		if release != nil {
			defer release()
		}
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
	rec.hold = id != nil
	ms.handler.ServeHTTP(rec, r.WithContext(ctx))
	rec.release(id)
	if sid != "" && rec.code == http.StatusNotFound {
		ms.forget(sid, caller.Client) // ended (idle, deleted): forget it
	}
	if id != nil && sid != "" && r.Context().Err() != nil {
		ms.cancel(context.WithoutCancel(ctx), r, sid, id)
	}
}

// tooMany refuses a new session of client while every one it holds is in use.
func tooMany(w http.ResponseWriter, client string) {
	http.Error(w, fmt.Sprintf("%s already has %d MCP sessions, each with a request in progress, the most one key may hold; end one (DELETE /mcp with its Mcp-Session-Id) or wait for one to finish.", client, MaxSessionsPerClient), http.StatusTooManyRequests)
}

// cancel tells session sid that the client of call id has gone, as a
// notifications/cancelled from it would: the call stops (a command is
// killed, a question to the owner withdrawn). A call that has answered
// is not affected.
func (ms *Handler) cancel(ctx context.Context, orig *http.Request, sid string, id json.RawMessage) {
	body, err := rpc.Notify("notifications/cancelled", cancelled{RequestID: id, Reason: "The HTTP request closed before the answer."})
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

// cancelled is the params of the notifications/cancelled Corral sends
// an MCP session for a client that went away.
type cancelled struct {
	Reason    string          `json:"reason"`
	RequestID json.RawMessage `json:"requestId"`
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

// readBody reads a POST's body. An agent's body larger than
// wsrpc.BigMessageBytes is read past that only with one of its key's
// places for large frames, shared with its /ws connections and held until
// the answer (release, nil for a small body): 128 MCP requests of one key
// with a 15 MiB file_write each took the daemon to 9.6 GB, where /ws
// frames, bounded so, took 1.4 GB.
func (ms *Handler) readBody(w http.ResponseWriter, r *http.Request, caller sandbox.Caller) (body []byte, release func(), err error) {
	in := http.MaxBytesReader(w, r.Body, ms.o.MaxMessageBytes)
	if caller.Owner {
		body, err = io.ReadAll(in)
		return body, nil, err
	}
	body, err = io.ReadAll(io.LimitReader(in, wsrpc.BigMessageBytes+1))
	if err != nil || len(body) <= wsrpc.BigMessageBytes {
		return body, nil, err
	}
	release, err = ms.srv.TakeBig(r.Context(), caller)
	if err != nil {
		return nil, nil, err
	}
	rest, err := io.ReadAll(in)
	if err != nil {
		release()
		return nil, nil, err
	}
	return append(body, rest...), release, nil
}
