package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/rpc"
	"corral/app/wsrpc"
	"corral/core/policy"
	"corral/core/sandbox"
)

const (
	// maxConnsPerClient bounds the /ws connections one agent key holds
	// open at once: each costs a file descriptor and memory for as long
	// as the agent keeps it, so without a bound one key could use up
	// Corral's descriptors and shut out the owner. The owner (token,
	// dashboard, paired devices) is not counted.
	maxConnsPerClient = 128
	// maxCallsPerClient bounds the calls one agent key runs at once over
	// all its /ws connections (each also has the transport's own bound of
	// 64) and MCP over HTTP (mcpMethods.Call). Without it, maxConnsPerClient connections of 64 calls each
	// could hold eight thousand image reads (up to 13 MiB an answer) at
	// once and exhaust Corral's memory.
	maxCallsPerClient = 64
)

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r, s.cfg.Server.PublicURL) {
		http.Error(w, "Cross-origin WebSocket refused.", http.StatusForbidden)
		return
	}
	caller, deviceID, ok := s.authenticate(r)
	if !ok {
		unauthorized(w)
		return
	}
	if !s.admitConn(w, caller) {
		return
	}
	held := !caller.Owner // released here unless the connection is tracked (then untrack releases it)
	defer func() {
		if held {
			s.releaseConn(caller.Client)
		}
	}()
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		// Origin was checked above, exactly; gorilla's own check would
		// accept a missing Origin header, which we allow on purpose for
		// non-browser agents, and nothing else.
		CheckOrigin: func(*http.Request) bool { return true },
		// The dashboard offers "corral" beside its second secret; the
		// answer names "corral" only, never the secret.
		Subprotocols: []string{wsProtocol},
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	share := s.shareOf(caller)
	c := &conn{
		s:        s,
		caller:   caller,
		deviceID: deviceID,
		session:  s.sessionCookie(r, caller),
		browser:  browserName(r.UserAgent()),
	}
	// The connection's context exists before anyone else can see c:
	// logout, device revocation and shutdown call finish from elsewhere.
	// Its life is the connection's, not the upgrade request's.
	c.Peer = wsrpc.New(context.WithoutCancel(r.Context()), ws, wsMethods{s}, c, wsrpc.Options{
		MaxMessageBytes: s.cfg.Server.MaxMessageBytes,
		Logger:          s.log.With("client", caller.Client),
		OnClose:         func() { s.untrack(c) },
		Calls:           share.calls,
		Waiting:         share.waiting,
	})
	c.done = c.Done()
	if s.track(c) {
		held = false // untrack releases it
		// A sign-out, a device's revocation or an agent's removal
		// between authenticate and track found no connection to end. Now that c is tracked, any
		// later one will find it, and an earlier one shows here.
		if !s.stillSignedIn(c, r) {
			c.finish()
		}
	} else {
		c.Shutdown(r.Context()) // Corral is shutting down: say "going away"
	}
	c.Serve()
}

// agentShare is what an agent's /ws connections share: places for its
// calls at once (wsrpc.Options.Calls) and the room its calls waiting to
// run take (wsrpc.Options.Waiting; 127 connections of tiny calls each
// in its own backlog held 565 MB).
type agentShare struct {
	calls   chan struct{}
	waiting *wsrpc.Waiting
}

// shareOf is what caller's connections share; for the owner nothing, no
// bound but each connection's.
func (s *Server) shareOf(caller sandbox.Caller) agentShare {
	if caller.Owner {
		return agentShare{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.agentCalls[caller.Client]
	if !ok {
		if s.agentCalls == nil {
			s.agentCalls = map[string]agentShare{}
		}
		sh = agentShare{calls: make(chan struct{}, maxCallsPerClient), waiting: new(wsrpc.Waiting)}
		s.agentCalls[caller.Client] = sh
	}
	return sh
}

// authenticate accepts a bearer key (client or owner, from this machine
// only) or, failing that, the owner's browser session or a paired
// device's cookie, each with its second secret (auth.go): a cookie alone
// is refused. Tokens in the query string are never looked at.
func (s *Server) authenticate(r *http.Request) (caller sandbox.Caller, deviceID string, ok bool) {
	if tok, ok := bearer(r); ok {
		if fromLAN(r) {
			return sandbox.Caller{}, "", false
		}
		c, ok := s.id.fromBearer(tok)
		if ok {
			s.touchAgent(r.Context(), c)
		}
		return c, "", ok
	}
	return s.signedBrowser(r)
}

// stillSignedIn reports whether the browser session, the paired device or
// the bearer key c was opened with is still valid: the owner may have
// signed out, revoked the device, or removed the agent or changed its key
// (agent.remove, agent.rotate_key, a config.toml reload) since
// authenticate.
func (s *Server) stillSignedIn(c *conn, r *http.Request) bool {
	switch {
	case c.session != "":
		return s.logins.valid(c.session)
	case c.deviceID != "":
		d, ok := s.device(r)
		return ok && d.ID == c.deviceID
	}
	if tok, ok := bearer(r); ok {
		now, ok := s.id.fromBearer(tok)
		return ok && now.Client == c.caller.Client
	}
	return true
}

// conn is one /ws connection as the server sees it: the transport's Peer
// (app/wsrpc: reader, workers, the one writer and its bounded queue) and
// who opened it. It is the Peer's Ident.
type conn struct {
	*wsrpc.Peer
	s        *Server
	caller   sandbox.Caller
	deviceID string // a paired device: only deviceMethods
	session  string // the browser session it was opened with, if any
	browser  string // the browser's name from its User-Agent ("Firefox"), for the audit log
	done     <-chan struct{}

	subsMu sync.Mutex
	subs   map[string]bool // subscriptions made on this connection
}

// wsMethods is the server's method table as the transport dispatches it.
type wsMethods struct{ s *Server }

// Dispatch runs one /ws call: while it waits for the owner's answer, the
// client hears so (request.progress).
func (d wsMethods) Dispatch(ctx context.Context, p *wsrpc.Peer, req *rpc.Request) (any, error) {
	c := p.Ident().(*conn)
	if !req.IsNotification() {
		ctx = policy.WithWaiting(ctx, func(a policy.Approval) {
			c.notify(progressMethod, progress{RequestID: req.ID, Message: waitingMessage(a)})
		})
	}
	return d.s.run(ctx, req.Method, &call{conn: c, caller: c.caller, id: req.ID, params: req.Params})
}

// progressMethod is the notification {request_id, message} that tells a
// /ws client what its call is waiting for (the owner's answer).
const progressMethod = "request.progress"

type progress struct {
	RequestID json.RawMessage `json:"request_id"`
	Message   string          `json:"message"`
}

// waitingMessage says what a call waits for while a is pending.
func waitingMessage(a policy.Approval) string {
	return "Waiting for the owner's answer: " + a.Description
}

// push, notify and finish are the Peer's Push, Notify and Close.
func (c *conn) push(b []byte) bool                    { return c.Push(b) }
func (c *conn) notify(method string, params any) bool { return c.Notify(method, params) }
func (c *conn) finish()                               { c.Close() }

// subscribeOnce reports whether this is the connection's first
// subscription to topic; a second one would duplicate every notification.
func (c *conn) subscribeOnce(topic string) bool {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	if c.subs[topic] {
		return false
	}
	if c.subs == nil {
		c.subs = map[string]bool{}
	}
	c.subs[topic] = true
	return true
}

// unsubscribe forgets a subscription whose forwarder has stopped.
func (c *conn) unsubscribe(topic string) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	delete(c.subs, topic)
}

// sessionCookie is the owner's session id a browser connection was opened
// with, so that signing out can close it.
func (s *Server) sessionCookie(r *http.Request, caller sandbox.Caller) string {
	if caller.Client != browserCaller.Client || !caller.Owner {
		return ""
	}
	// The cookie its secret names, valid or not: a sign-out since
	// authenticate shows in stillSignedIn.
	for _, v := range cookieValues(r, cookieName) {
		if hasSecret(r, s.secretFor("session", v)) {
			return v
		}
	}
	return ""
}

// unauthorized answers a request without a key (or cookie) Corral knows.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
	http.Error(w, "Authentication required: send Authorization: Bearer <key>.", http.StatusUnauthorized)
}

// admitConn takes one of an agent's connection places (/ws and /mcp
// count against the same bound), or answers 429 and says false. The
// owner's connections are not counted. The caller releases a place taken
// (releaseConn).
func (s *Server) admitConn(w http.ResponseWriter, caller sandbox.Caller) bool {
	if caller.Owner || s.holdConn(caller.Client) {
		return true
	}
	http.Error(w, fmt.Sprintf("%s already has %d connections open, the most one agent may hold; close one first.", caller.Client, maxConnsPerClient), http.StatusTooManyRequests)
	return false
}
