package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/rpc"
	"corral/core/policy"
	"corral/core/sandbox"
)

const (
	writeWait   = 10 * time.Second
	pongWait    = 60 * time.Second
	pingPeriod  = pongWait * 9 / 10
	maxInFlight = 64 // concurrent calls per connection; more wait
	// sendQueue is how many frames wait for the writer. A push that finds
	// it full drops the connection: the client is not reading.
	sendQueue = 1024
	// maxConnsPerClient bounds the /ws connections one agent key holds
	// open at once: each costs a file descriptor and memory for as long
	// as the agent keeps it, so without a bound one key could use up
	// Corral's descriptors and shut out the owner. The owner (token,
	// dashboard, paired devices) is not counted.
	maxConnsPerClient = 128
)

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r, s.cfg.Server.PublicURL) {
		http.Error(w, "Cross-origin WebSocket refused.", http.StatusForbidden)
		return
	}
	caller, deviceID, ok := s.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
		http.Error(w, "Authentication required: send Authorization: Bearer <key>.", http.StatusUnauthorized)
		return
	}
	if !caller.Owner {
		if !s.holdConn(caller.Client) {
			http.Error(w, fmt.Sprintf("%s already has %d connections open, the most one agent may hold; close one first.", caller.Client, maxConnsPerClient), http.StatusTooManyRequests)
			return
		}
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
	c := &conn{
		s:        s,
		ws:       ws,
		caller:   caller,
		deviceID: deviceID,
		session:  s.sessionCookie(r, caller),
		browser:  browserName(r.UserAgent()),
		done:     make(chan struct{}),
		work:     make(chan job),
		send:     make(chan frame, sendQueue),
	}
	// The connection's context exists before anyone else can see c:
	// logout, device revocation and shutdown call finish from elsewhere.
	// Its life is the connection's, not the upgrade request's.
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	if !s.track(c) {
		c.cancel()
		ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "shutting down"), time.Now().Add(time.Second))
		ws.Close()
		return
	}
	held = false // untrack releases it
	// A sign-out or a device's revocation between authenticate and track
	// found no connection to end. Now that c is tracked, any later one
	// will find it, and an earlier one shows here.
	if !s.stillSignedIn(c, r) {
		c.finish()
	}
	go c.writeLoop()
	c.readLoop()
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

// stillSignedIn reports whether the browser session or the paired device
// c was opened with is still valid; bearer keys are not withdrawn while
// Corral runs.
func (s *Server) stillSignedIn(c *conn, r *http.Request) bool {
	switch {
	case c.session != "":
		return s.logins.valid(c.session)
	case c.deviceID != "":
		d, ok := s.device(r)
		return ok && d.ID == c.deviceID
	}
	return true
}

// conn is one WebSocket connection, after gorilla's chat example: a
// reader that hands each request to a worker goroutine (at most
// maxInFlight of them, started as needed and kept for the connection's
// life, so their stacks are grown once), and one writer (writeLoop) that
// drains the bounded send queue. Nothing else writes to the socket.
//
// Guarantees:
//   - Pushes (notify, push: approvals, audit events, command.output,
//     request.progress) never wait: a full queue drops the connection, so
//     no client slows the broker, the audit feed or a command's output.
//   - Answers (queue) wait for room, but never longer than the connection
//     lives; the writer's deadline (writeWait) ends a connection whose
//     peer stops reading, so that wait is bounded too. A healthy client
//     loses no answer; on shutdown the answers of the calls drained are
//     written before the close frame.
//   - $/cancelRequest is handled by the reader, never behind the calls it
//     cancels.
//
// Not guaranteed: pushes to a dropped connection are lost (clients
// reconnect and subscribe afresh); frames are written in queue order, not
// in the order the calls were received.
type conn struct {
	s        *Server
	ws       *websocket.Conn
	caller   sandbox.Caller
	deviceID string          // a paired device: only deviceMethods
	session  string          // the browser session it was opened with, if any
	browser  string          // the browser's name from its User-Agent ("Firefox"), for the audit log
	ctx      context.Context // cancelled when the connection ends
	cancel   context.CancelFunc

	send      chan frame    // frames for writeLoop, the only writer
	done      chan struct{} // closed when the connection is finished
	doneOnce  sync.Once
	work      chan job // unbuffered: taken only by an idle worker
	workers   int      // workers started; only readLoop touches it
	calls     sync.WaitGroup
	flightMu  sync.Mutex
	inflight  map[string][]context.CancelFunc // by requestID: cancelled by $/cancelRequest
	subsMu    sync.Mutex
	subs      map[string]bool // subscriptions made on this connection
	draining  atomic.Bool     // shutting down: let in-flight calls answer
	goingAway atomic.Bool     // close with 1001 instead of 1000
}

func (c *conn) readLoop() {
	defer func() {
		if !c.draining.Load() {
			c.finish() // the peer left or broke the protocol: stop everything now
		}
	}()
	c.ws.SetReadLimit(c.s.cfg.Server.MaxMessageBytes)
	c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		c.ws.SetReadDeadline(time.Now().Add(pongWait))
		return nil
	})
	for {
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			// gorilla answers an oversized message with close 1009 itself.
			return
		}
		if c.draining.Load() {
			return
		}
		c.ws.SetReadDeadline(time.Now().Add(pongWait))
		if kind != websocket.TextMessage {
			c.queue(rpc.Fail(nil, &rpc.Error{Code: rpc.CodeInvalidRequest, Message: "Send requests as text frames of JSON."}))
			continue
		}
		req, id, perr := rpc.Parse(data)
		if perr != nil {
			c.queue(rpc.Fail(id, perr))
			continue
		}
		if req.Method == rpc.CancelRequest {
			// Here, not on a worker: a cancel must not wait behind the
			// calls it cancels.
			c.cancelRequest(req)
			continue
		}
		j := c.start(req)
		c.calls.Add(1)
		select {
		case c.work <- j: // an idle worker took it
			continue
		default:
		}
		if c.workers < maxInFlight {
			c.workers++
			go c.worker(j)
			continue
		}
		select {
		case c.work <- j:
		case <-c.done:
			j.end()
			c.calls.Done()
			return
		}
	}
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

// job is one request with the context it runs under: the connection's,
// or for a request with an id its own, which $/cancelRequest cancels.
type job struct {
	req *rpc.Request
	ctx context.Context
	end func() // forgets the request and releases its context
}

// start makes req's job; a request with an id can be cancelled from the
// moment it is read, also while it waits for a worker.
func (c *conn) start(req *rpc.Request) job {
	if req.IsNotification() {
		return job{req: req, ctx: c.ctx, end: func() {}}
	}
	ctx, cancel := context.WithCancel(c.ctx)
	key := requestID(req.ID)
	c.flightMu.Lock()
	if c.inflight == nil {
		c.inflight = map[string][]context.CancelFunc{}
	}
	c.inflight[key] = append(c.inflight[key], cancel)
	c.flightMu.Unlock()
	return job{req: req, ctx: ctx, end: func() {
		cancel()
		c.flightMu.Lock()
		defer c.flightMu.Unlock()
		// Ids may repeat: forget the oldest with this id (this one, or one
		// that will find its own entry gone, which does no harm).
		if l := c.inflight[key]; len(l) > 1 {
			c.inflight[key] = l[1:]
		} else {
			delete(c.inflight, key)
		}
	}}
}

// cancelRequest cancels the calls of this connection whose id is the
// notification's params.id: a running command is killed, a pending
// approval withdrawn. The calls still answer (a cancelled command with
// its output so far, a withdrawn question as denied). An unknown id, or a
// call that has answered, is ignored; a cancel sent as a request (with an
// id) is answered with {cancelled}.
func (c *conn) cancelRequest(req *rpc.Request) {
	var a struct {
		ID json.RawMessage `json:"id" rpc:"required"`
	}
	if err := rpc.DecodeParams(req.Params, &a); err != nil {
		if !req.IsNotification() {
			c.queue(rpc.Fail(req.ID, rpc.FromError(err)))
		}
		return
	}
	c.flightMu.Lock()
	l := c.inflight[requestID(a.ID)]
	for _, cancel := range l {
		cancel()
	}
	c.flightMu.Unlock()
	if !req.IsNotification() {
		if b, err := rpc.AppendResult(nil, req.ID, map[string]bool{"cancelled": len(l) > 0}); err == nil {
			c.queue(b)
		}
	}
}

// worker handles j, then whatever the reader hands it, until the
// connection is finished.
func (c *conn) worker(j job) {
	for {
		c.handle(j.ctx, j.req)
		j.end()
		c.calls.Done()
		select {
		case j = <-c.work:
		case <-c.done:
			return
		}
	}
}

// handle runs one call under ctx and queues its answer.
func (c *conn) handle(ctx context.Context, req *rpc.Request) {
	if !req.IsNotification() {
		ctx = policy.WithWaiting(ctx, func(a policy.Approval) {
			c.notify(progressMethod, progress{RequestID: req.ID, Message: waitingMessage(a)})
		})
	}
	result, err := c.s.run(ctx, req.Method, &call{conn: c, caller: c.caller, id: req.ID, params: req.Params})
	if req.IsNotification() {
		return
	}
	if err != nil {
		c.queue(rpc.Fail(req.ID, rpc.FromError(err)))
		return
	}
	// The buffer goes to the writer with the frame, which puts it back.
	bp := frames.Get().(*[]byte)
	b, merr := rpc.AppendResult((*bp)[:0], req.ID, result)
	if merr != nil {
		frames.Put(bp)
		c.s.log.Error("encode result", "method", req.Method, "err", merr)
		c.queue(rpc.Fail(req.ID, rpc.FromError(merr)))
		return
	}
	*bp = b
	c.enqueue(frame{b: b, pooled: bp})
}

// frame is one message for the writer; pooled, if set, holds b and goes
// back to frames once b is written.
type frame struct {
	b      []byte
	pooled *[]byte
}

func (f frame) release() {
	if f.pooled != nil && cap(*f.pooled) <= maxPooledFrame {
		frames.Put(f.pooled)
	}
}

// frames holds answer buffers; one bigger than maxPooledFrame is dropped.
var frames = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

const maxPooledFrame = 1 << 20

// queue queues an answer: it waits for room in the send queue, but only
// as long as the connection lives. It reports false once the connection
// is finished.
func (c *conn) queue(b []byte) bool { return c.enqueue(frame{b: b}) }

func (c *conn) enqueue(f frame) bool {
	select {
	case <-c.done:
		f.release()
		return false
	default:
	}
	select {
	case c.send <- f:
		return true
	case <-c.done:
		f.release()
		return false
	}
}

// push queues a notification without waiting: a connection whose queue
// is full is not reading and is dropped. It reports false once the
// connection is finished (or has just been dropped).
func (c *conn) push(b []byte) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.send <- frame{b: b}:
		return true
	default:
		c.s.log.Warn("dropping a connection that does not read what it is sent", "client", c.caller.Client)
		c.finish()
		return false
	}
}

// writeLoop is the connection's only writer: it writes queued frames,
// pings the peer, and once the connection is finished says goodbye and
// closes it. A peer that does not take a frame within writeWait is
// dropped rather than waited on.
func (c *conn) writeLoop() {
	ping := time.NewTicker(pingPeriod)
	defer func() {
		ping.Stop()
		c.ws.Close()
	}()
	for {
		select {
		case f := <-c.send:
			if !c.write(f, time.Now().Add(writeWait)) {
				return
			}
			// Let the workers and the audit committer run: woken by
			// every answer, the writer would otherwise keep the
			// processor from the calls whose answers it waits for
			// (BenchmarkFileRead: 0.38× the bare server without this,
			// 0.7× with it, on two cores).
			runtime.Gosched()
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				c.finish()
				return
			}
		case <-c.done:
			code := websocket.CloseNormalClosure
			if c.goingAway.Load() {
				// Shutting down: the answers of the calls it waited
				// for are queued; send them before saying goodbye.
				code = websocket.CloseGoingAway
				dl := time.Now().Add(time.Second)
				for len(c.send) > 0 && c.write(<-c.send, dl) {
				}
			}
			c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
			return
		}
	}
}

// write writes f by deadline dl; a failure finishes the connection.
func (c *conn) write(f frame, dl time.Time) bool {
	c.ws.SetWriteDeadline(dl)
	err := c.ws.WriteMessage(websocket.TextMessage, f.b)
	f.release()
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			c.s.log.Warn("dropping slow connection", "client", c.caller.Client)
		}
		c.finish()
		return false
	}
	return true
}

// finish ends the connection once: the reader stops, subscriptions and
// pending calls see the context cancelled, and the writer closes.
func (c *conn) finish() {
	c.doneOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		close(c.done)
		c.ws.SetReadDeadline(time.Now()) // unblock the reader
		c.s.untrack(c)
	})
}

// shutdown stops reading new requests and waits for in-flight calls
// (bounded by ctx) so their answers go out. Calls still waiting halfway
// through — on an approval, say — see their context cancelled, which
// withdraws the question and stops commands, so they too answer before the
// connection closes with "going away".
func (c *conn) shutdown(ctx context.Context) {
	c.draining.Store(true)
	c.ws.SetReadDeadline(time.Now())
	waited := make(chan struct{})
	go func() { c.calls.Wait(); close(waited) }()
	half := time.Second
	if dl, ok := ctx.Deadline(); ok {
		half = time.Until(dl) / 2
	}
	select {
	case <-waited:
	case <-time.After(half):
		c.cancel()
		select {
		case <-waited:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	c.goingAway.Store(true)
	c.finish()
}

// notify pushes a notification without waiting (see push); it reports
// false once the connection is gone.
func (c *conn) notify(method string, params any) bool {
	b, err := rpc.Notify(method, params)
	if err != nil {
		return true
	}
	return c.push(b)
}

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
