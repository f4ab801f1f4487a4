// Package wsrpc serves JSON-RPC 2.0 (app/rpc, docs/protocol.md) over one
// WebSocket connection, after gorilla's chat example: a reader that hands
// each request to a worker goroutine, and one writer that drains a
// bounded send queue. What a method does is the Dispatcher's business;
// who the peer is, the caller's (Peer.Ident).
//
// Guarantees, per connection:
//   - Nothing but the writer writes to the socket; it pings the peer
//     every pingPeriod and drops a peer that does not take a frame within
//     Options.WriteWait, or sends nothing (not even a pong) for pongWait.
//   - A frame larger than Options.MaxMessageBytes closes the connection
//     with 1009. Every other frame is answered: a malformed one with its
//     JSON-RPC error (parse error, invalid request, invalid params), a
//     call with its result or error. No frame panics the reader.
//   - At most maxInFlight calls run at once. Beyond that a call waits in
//     a backlog and the reader goes on reading, so a $/cancelRequest
//     still arrives. Once the calls waiting (in the backlog, or on a
//     worker for a place in Options.Calls) are maxBacklog calls or
//     Options.BacklogBytes of frames — of this peer, or of all the peers that
//     share Options.Waiting — the reader of a peer with a call waiting
//     waits for a worker, so peers cannot start unbounded goroutines or
//     make Corral hold unbounded requests.
//     A frame larger than Options.BigFrameBytes (1 MiB) is read whole only
//     with one of its Waiting's Options.BigFrames places (16), held until
//     its call answers: the peers of one key hold at most that many large
//     frames, each reader at most BigFrameBytes of one more.
//     Peers that share Options.Calls run at most its capacity at once
//     between them; a call waits for a place, and one cancelled then
//     answers so (kind unavailable).
//   - Pushes (Push, Notify) never wait: a full send queue (SendQueue
//     frames or QueueBytes bytes) drops the connection, so no peer slows
//     whoever pushes.
//   - Answers wait for room in the queue, but never longer than the
//     connection lives; a healthy peer loses no answer. Each answer is
//     one whole frame. A peer that reads nothing has at most QueueBytes
//     queued for it, besides the answers of its maxInFlight calls.
//   - $/cancelRequest {id} is handled by the reader, never behind the
//     calls it cancels (unless the peer has filled the backlog too): the
//     context of this connection's calls with that id is cancelled,
//     running or waiting. The calls still answer; one cancelled while it
//     waited never starts.
//   - Shutdown stops reading, lets the calls in flight answer (cancelling
//     them halfway to its deadline), writes their answers, then closes
//     with 1001.
//
// Not guaranteed: pushes to a dropped connection are lost (peers reconnect
// and subscribe afresh); frames go out in queue order, not in the order
// the calls were received; a Dispatcher that panics takes the process
// down (recover there).
package wsrpc

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/rpc"
	"corral/core/errs"
)

const (
	writeWait   = 10 * time.Second
	pongWait    = 60 * time.Second
	pingPeriod  = pongWait * 9 / 10
	maxInFlight = 64 // concurrent calls per connection; more wait
	// maxBacklog and maxBacklogBytes (Options.BacklogBytes' default)
	// bound the calls read while every worker is busy; past either the
	// reader waits for a worker.
	maxBacklog      = 4096
	maxBacklogBytes = 8 << 20
	// bigFrameBytes and maxBigFrames (Options.BigFrameBytes' and
	// BigFrames' defaults) bound the large frames the peers sharing a
	// Waiting hold, read or in flight: 128 connections of one agent key
	// with a 15 MiB file.write each took the daemon to 4.7 GiB when only
	// the waiting calls were bounded (each peer may keep one waiting and
	// one in its reader's hand beyond BacklogBytes).
	bigFrameBytes = 1 << 20
	maxBigFrames  = 16
	// SendQueue is how many frames wait for the writer. A push that finds
	// it full drops the connection: the peer is not reading.
	SendQueue = 1024
	// QueueBytes bounds the bytes of the frames waiting for the writer,
	// however few frames they are: a frame larger than QueueBytes waits
	// for an empty queue and goes alone. SendQueue alone would let a peer
	// that does not read have a thousand image reads (13 MiB each) kept
	// for it until writeWait drops it.
	QueueBytes = 32 << 20
)

// Dispatcher runs the calls a Peer reads. Dispatch runs on a worker
// goroutine, under a context that ends with the connection or with a
// $/cancelRequest for req.ID; for a notification (req.ID nil) its result
// is dropped.
type Dispatcher interface {
	Dispatch(ctx context.Context, p *Peer, req *rpc.Request) (result any, err error)
}

// Options set a connection's limits and what it tells its owner.
type Options struct {
	MaxMessageBytes int64        // the largest frame read; 0: gorilla's default (none)
	Logger          *slog.Logger // nil: slog.Default(); give it the peer's attributes
	// OnClose, if set, is called once when the connection is finished,
	// from whichever goroutine finished it.
	OnClose func()
	// Calls, if set, is shared by Peers whose calls running at once it
	// bounds together, to its capacity (one agent's connections, say): a
	// call holds a place from before Dispatch until its answer is queued.
	Calls chan struct{}
	// Waiting, if set, is shared by Peers whose calls waiting to run it
	// bounds together, to maxBacklog calls and BacklogBytes (one
	// agent's connections); nil: each Peer's own.
	Waiting *Waiting
	// BacklogBytes bounds the bytes of the frames of the calls waiting
	// to run (this Peer's, or all those of its Waiting: give the Peers
	// that share one the same value); 0: maxBacklogBytes (8 MiB). Tests
	// set a smaller one, to fill it with less.
	BacklogBytes int64
	// WriteWait is how long the writer waits for the peer to take one
	// frame before it drops the peer; 0: writeWait (10 s). Tests set a
	// shorter one, not to wait out the default.
	WriteWait time.Duration
	// BigFrameBytes is the size past which a frame needs one of
	// BigFrames places (shared through Waiting, like BacklogBytes: give
	// the Peers that share one the same values) to be read whole; 0:
	// bigFrameBytes (1 MiB) and maxBigFrames (16).
	BigFrameBytes int64
	BigFrames     int
}

// Waiting counts the calls read and not yet running of the Peers that
// share it (Options.Waiting), and holds their places for large frames.
type Waiting struct {
	calls, bytes atomic.Int64
	bigOnce      sync.Once
	big          chan struct{}
}

// bigPlaces is w's places for large frames, n of them (made on first use).
func (w *Waiting) bigPlaces(n int) chan struct{} {
	w.bigOnce.Do(func() { w.big = make(chan struct{}, n) })
	return w.big
}

// BigMessageBytes is the size past which a message needs one of its
// key's places for large frames (the default BigFrameBytes).
const BigMessageBytes = bigFrameBytes

// TakeBig takes one of w's places for large frames, for a large message
// that does not come through a Peer (MCP over HTTP), so that it counts
// against the same bound as the large frames of the Peers sharing w
// (which must use the default BigFrames). It waits until ctx ends, and
// returns the function that gives the place back.
func (w *Waiting) TakeBig(ctx context.Context) (release func(), err error) {
	places := w.bigPlaces(maxBigFrames)
	select {
	case places <- struct{}{}:
		return sync.OnceFunc(func() { <-places }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Peer is one WebSocket connection served by a Dispatcher.
type Peer struct {
	ws    *websocket.Conn
	d     Dispatcher
	ident any
	opt   Options
	log   *slog.Logger
	ctx   context.Context // cancelled when the connection ends
	stop  context.CancelFunc

	send      chan frame    // frames for writeLoop, the only writer
	queued    atomic.Int64  // bytes of the frames in send (reserve)
	room      chan struct{} // the writer wrote a frame: answers waiting for room look again
	done      chan struct{} // closed when the connection is finished
	doneOnce  sync.Once
	work      chan job     // unbuffered: taken only by an idle worker
	backlog   chan job     // calls read while every worker was busy
	waiting   *Waiting     // the calls read and not yet running: Options.Waiting, or its own
	mine      atomic.Int64 // this peer's calls among them
	workers   int          // workers started; only readLoop touches it
	calls     sync.WaitGroup
	flightMu  sync.Mutex
	inflight  map[string][]*context.CancelFunc // by request id: cancelled by $/cancelRequest
	draining  atomic.Bool                      // shutting down: let in-flight calls answer
	drainMu   sync.Mutex                       // orders calls.Add before Shutdown's calls.Wait
	goingAway atomic.Bool                      // close with 1001 instead of 1000
}

// New makes the Peer for ws; ident is what Ident returns to the
// Dispatcher. Calls run under a context derived from ctx (give it one
// that outlives the upgrade request). Nothing is read or written until
// Serve.
func New(ctx context.Context, ws *websocket.Conn, d Dispatcher, ident any, o Options) *Peer {
	p := &Peer{
		ws: ws, d: d, ident: ident, opt: o, log: o.Logger,
		done:    make(chan struct{}),
		work:    make(chan job),
		backlog: make(chan job, maxBacklog),
		send:    make(chan frame, SendQueue),
		room:    make(chan struct{}, 1),
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.opt.BacklogBytes <= 0 {
		p.opt.BacklogBytes = maxBacklogBytes
	}
	if p.opt.WriteWait <= 0 {
		p.opt.WriteWait = writeWait
	}
	if p.opt.BigFrameBytes <= 0 {
		p.opt.BigFrameBytes = bigFrameBytes
	}
	if p.opt.BigFrames <= 0 {
		p.opt.BigFrames = maxBigFrames
	}
	if p.waiting = o.Waiting; p.waiting == nil {
		p.waiting = new(Waiting)
	}
	p.ctx, p.stop = context.WithCancel(ctx)
	return p
}

// Ident is what the connection was opened with (New's ident).
func (p *Peer) Ident() any { return p.ident }

// Done is closed once the connection is finished.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Serve starts the writer and reads requests until the connection
// finishes (the peer leaves or breaks the protocol, Close, Shutdown).
// The writer says goodbye and closes the socket on its own time.
func (p *Peer) Serve() {
	go p.writeLoop()
	p.readLoop()
}

func (p *Peer) readLoop() {
	defer func() {
		if !p.draining.Load() {
			p.Close() // the peer left or broke the protocol: stop everything now
		}
	}()
	if p.opt.MaxMessageBytes > 0 {
		p.ws.SetReadLimit(p.opt.MaxMessageBytes)
	}
	p.ws.SetReadDeadline(time.Now().Add(pongWait))
	p.ws.SetPongHandler(func(string) error {
		p.ws.SetReadDeadline(time.Now().Add(pongWait))
		return nil
	})
	for {
		kind, data, release, err := p.readFrame()
		if err != nil {
			// gorilla answers an oversized message with close 1009 itself.
			return
		}
		big := release != nil
		if !big {
			release = func() {}
		}
		if p.draining.Load() {
			release()
			return
		}
		p.ws.SetReadDeadline(time.Now().Add(pongWait))
		if kind != websocket.TextMessage {
			release()
			p.queue(rpc.Fail(nil, &rpc.Error{Code: rpc.CodeInvalidRequest, Message: "Send requests as text frames of JSON."}))
			continue
		}
		req, id, perr := rpc.Parse(data)
		if perr != nil {
			release()
			p.queue(rpc.Fail(id, perr))
			continue
		}
		if req.Method == rpc.CancelRequest {
			// Here, not on a worker: a cancel must not wait behind the
			// calls it cancels.
			release()
			p.cancelRequest(req)
			continue
		}
		j := p.start(req, len(data))
		if end := j.end; big {
			j.end = func() { end(); release() }
		}
		if !p.addCall() {
			j.end() // Shutdown began while it was read: not taken
			return
		}
		if !p.hand(j) {
			return
		}
	}
}

// addCall counts a call in flight unless Shutdown has begun: a
// WaitGroup must not go up from zero while Shutdown waits on it (the race
// detector caught a call read as the daemon shut down).
func (p *Peer) addCall() bool {
	p.drainMu.Lock()
	defer p.drainMu.Unlock()
	if p.draining.Load() {
		return false
	}
	p.calls.Add(1)
	return true
}

// readFrame reads the next frame. One larger than BigFrameBytes is read
// past that only with a place for large frames, which release gives back
// (nil for a smaller frame): the caller releases it once the frame's call
// has answered, or at once when the frame is no call.
func (p *Peer) readFrame() (kind int, data []byte, release func(), err error) {
	kind, r, err := p.ws.NextReader()
	if err != nil {
		return 0, nil, nil, err
	}
	data, err = io.ReadAll(io.LimitReader(r, p.opt.BigFrameBytes+1))
	if err != nil || int64(len(data)) <= p.opt.BigFrameBytes {
		return kind, data, nil, err
	}
	places := p.waiting.bigPlaces(p.opt.BigFrames)
	select {
	case places <- struct{}{}:
	case <-p.done:
		return 0, nil, nil, net.ErrClosed
	}
	release = sync.OnceFunc(func() { <-places })
	rest, err := io.ReadAll(r)
	if err != nil {
		release()
		return 0, nil, nil, err
	}
	return kind, append(data, rest...), release, nil
}

// hand gives j to an idle worker, a new one, or the backlog, while the
// calls that wait (in a backlog, or on a worker for a place in
// Options.Calls) fit in maxBacklog and Options.BacklogBytes, or none of this
// peer's waits; otherwise it waits for a worker. It reports false, having
// ended j, when the connection finished meanwhile.
func (p *Peer) hand(j job) bool {
	alone := p.mine.Add(1) == 1
	calls, bytes := p.waiting.calls.Add(1), p.waiting.bytes.Add(int64(j.size))
	if alone || calls <= maxBacklog && bytes <= p.opt.BacklogBytes {
		select {
		case p.work <- j:
			return true
		default:
		}
		if p.workers < maxInFlight {
			p.workers++
			go p.worker(j)
			return true
		}
		select {
		case p.backlog <- j:
			select {
			case <-p.done: // the workers may have left before it arrived
				p.dropBacklog()
			default:
			}
			return true
		default:
		}
	}
	// A call of this peer waits too: a worker comes free once it has
	// had a place and answered.
	select {
	case p.work <- j:
		return true
	case <-p.done:
		p.ran(j)
		j.end()
		p.calls.Done()
		return false
	}
}

// dropBacklog forgets the calls waiting in the backlog of a finished
// connection: nobody is there to answer.
func (p *Peer) dropBacklog() {
	for {
		select {
		case j := <-p.backlog:
			p.ran(j)
			j.end()
			p.calls.Done()
		default:
			return
		}
	}
}

// ran ends j's wait: it runs, or never will.
func (p *Peer) ran(j job) {
	p.mine.Add(-1)
	p.waiting.calls.Add(-1)
	p.waiting.bytes.Add(-int64(j.size))
}

// job is one request with the context it runs under: the connection's,
// or for a request with an id its own, which $/cancelRequest cancels.
type job struct {
	req  *rpc.Request
	ctx  context.Context
	end  func() // forgets the request and releases its context
	size int    // bytes of the frame it came in; counted in waiting until it runs
}

// start makes req's job; a request with an id can be cancelled from the
// moment it is read, also while it waits for a worker.
func (p *Peer) start(req *rpc.Request, size int) job {
	if req.IsNotification() {
		return job{req: req, ctx: p.ctx, end: func() {}, size: size}
	}
	ctx, cancel := context.WithCancel(p.ctx)
	key, _ := rpc.IDText(req.ID)
	p.flightMu.Lock()
	if p.inflight == nil {
		p.inflight = map[string][]*context.CancelFunc{}
	}
	mine := &cancel
	p.inflight[key] = append(p.inflight[key], mine)
	p.flightMu.Unlock()
	return job{req: req, ctx: ctx, size: size, end: func() {
		cancel()
		p.flightMu.Lock()
		defer p.flightMu.Unlock()
		// Ids may repeat: forget this call only, so that $/cancelRequest
		// still reaches another with its id.
		if l := slices.DeleteFunc(p.inflight[key], func(c *context.CancelFunc) bool { return c == mine }); len(l) > 0 {
			p.inflight[key] = l
		} else {
			delete(p.inflight, key)
		}
	}}
}

// cancelRequest cancels the calls of this connection whose id is the
// notification's params.id: the Dispatcher sees their context end. An
// unknown id, or a call that has answered, is ignored; a cancel sent as a
// request (with an id) is answered with {cancelled}.
func (p *Peer) cancelRequest(req *rpc.Request) {
	var a struct {
		ID json.RawMessage `json:"id" rpc:"required"`
	}
	if err := rpc.DecodeParams(req.Params, &a); err != nil {
		if !req.IsNotification() {
			p.queue(rpc.Fail(req.ID, rpc.FromError(err)))
		}
		return
	}
	p.flightMu.Lock()
	key, _ := rpc.IDText(a.ID)
	l := p.inflight[key]
	for _, cancel := range l {
		(*cancel)()
	}
	p.flightMu.Unlock()
	if !req.IsNotification() {
		if b, err := rpc.AppendResult(nil, req.ID, map[string]bool{"cancelled": len(l) > 0}); err == nil {
			p.queue(b)
		}
	}
}

// worker handles j, then the backlog's calls in the order read, then
// whatever the reader hands it, until the connection is finished.
func (p *Peer) worker(j job) {
	for {
		p.handle(j)
		j.end()
		p.calls.Done()
		select {
		case <-p.done: // first: a finished connection's backlog is dropped
			p.dropBacklog()
			return
		default:
		}
		select {
		case j = <-p.backlog:
			continue
		default:
		}
		select {
		case j = <-p.work:
		case j = <-p.backlog:
		case <-p.done:
			p.dropBacklog()
			return
		}
	}
}

// handle runs j's call and queues its answer, holding a place in
// Options.Calls (if set) until the answer is queued. Until it has the
// place the call counts as waiting: a worker holds its frame then too. A
// call cancelled before it starts (or whose connection finished) never
// starts: it answers that it was cancelled.
func (p *Peer) handle(j job) {
	ctx, req := j.ctx, j.req
	why := "The call was cancelled before it started, while it waited for this connection's other calls."
	if p.opt.Calls != nil {
		select {
		case p.opt.Calls <- struct{}{}:
			defer func() { <-p.opt.Calls }()
		case <-ctx.Done():
			why = "The call was cancelled while it waited for this agent's other calls to finish."
		}
	}
	p.ran(j)
	if ctx.Err() != nil {
		if !req.IsNotification() {
			p.queue(rpc.Fail(req.ID, rpc.FromError(errs.New(errs.Unavailable, "", "%s", why))))
		}
		return
	}
	result, err := p.d.Dispatch(ctx, p, req)
	if req.IsNotification() {
		return
	}
	if err != nil {
		p.queue(rpc.Fail(req.ID, rpc.FromError(err)))
		return
	}
	// The buffer goes to the writer with the frame, which puts it back.
	bp := frames.Get().(*[]byte)
	b, merr := rpc.AppendResult((*bp)[:0], req.ID, result)
	if merr != nil {
		frames.Put(bp)
		p.log.Error("encode result", "method", req.Method, "err", merr)
		p.queue(rpc.Fail(req.ID, rpc.FromError(merr)))
		return
	}
	*bp = b
	p.enqueue(frame{b: b, pooled: bp})
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
func (p *Peer) queue(b []byte) bool { return p.enqueue(frame{b: b}) }

func (p *Peer) enqueue(f frame) bool {
	select {
	case <-p.done:
		f.release()
		return false
	default:
	}
	if !p.reserve(len(f.b), true) {
		f.release()
		return false
	}
	select {
	case p.send <- f:
		return true
	case <-p.done:
		f.release()
		return false
	}
}

// reserve counts n more bytes in the send queue if they fit in
// QueueBytes, or if the queue is empty (a larger frame goes alone).
// Otherwise it waits for the writer to make room when wait is set (an
// answer), or reports false at once (a push). It reports false once the
// connection is finished.
func (p *Peer) reserve(n int, wait bool) bool {
	for {
		q := p.queued.Load()
		if q == 0 || q+int64(n) <= QueueBytes {
			if p.queued.CompareAndSwap(q, q+int64(n)) {
				return true
			}
			continue
		}
		if !wait {
			return false
		}
		select {
		case <-p.room:
		case <-p.done:
			return false
		}
	}
}

// Push queues the frame b without waiting: a connection whose queue is
// full is not reading and is dropped. It reports false once the
// connection is finished (or has just been dropped).
func (p *Peer) Push(b []byte) bool {
	select {
	case <-p.done:
		return false
	default:
	}
	if p.reserve(len(b), false) {
		select {
		case p.send <- frame{b: b}:
			return true
		default:
			p.queued.Add(-int64(len(b)))
		}
	}
	p.log.Warn("dropping a connection that does not read what it is sent")
	p.Close()
	return false
}

// Notify pushes the notification method(params) without waiting (see
// Push); it reports false once the connection is gone.
func (p *Peer) Notify(method string, params any) bool {
	b, err := rpc.Notify(method, params)
	if err != nil {
		return true
	}
	return p.Push(b)
}

// writeLoop is the connection's only writer: it writes queued frames,
// pings the peer, and once the connection is finished says goodbye and
// closes it. A peer that does not take a frame within Options.WriteWait is
// dropped rather than waited on.
func (p *Peer) writeLoop() {
	ping := time.NewTicker(pingPeriod)
	defer func() {
		ping.Stop()
		p.ws.Close()
	}()
	for {
		select {
		case f := <-p.send:
			// No yield here: with bare and corral measured in turns,
			// a runtime.Gosched after each frame changed neither the
			// rate nor the CPU per call (docs/benchmarks.md).
			if !p.write(f, time.Now().Add(p.opt.WriteWait)) {
				return
			}
		case <-ping.C:
			if err := p.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(p.opt.WriteWait)); err != nil {
				p.Close()
				return
			}
		case <-p.done:
			code := websocket.CloseNormalClosure
			if p.goingAway.Load() {
				// Shutting down: the answers of the calls it waited
				// for are queued; send them before saying goodbye.
				code = websocket.CloseGoingAway
				dl := time.Now().Add(time.Second)
				for len(p.send) > 0 && p.write(<-p.send, dl) {
				}
			}
			p.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
			return
		}
	}
}

// write writes f by deadline dl; a failure finishes the connection.
func (p *Peer) write(f frame, dl time.Time) bool {
	p.ws.SetWriteDeadline(dl)
	err := p.ws.WriteMessage(websocket.TextMessage, f.b)
	p.queued.Add(-int64(len(f.b)))
	select {
	case p.room <- struct{}{}:
	default: // already signalled
	}
	f.release()
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			p.log.Warn("dropping slow connection")
		}
		p.Close()
		return false
	}
	return true
}

// Close ends the connection once: the reader stops, calls in flight see
// their context cancelled, and the writer closes with 1000.
func (p *Peer) Close() {
	p.doneOnce.Do(func() {
		p.stop()
		close(p.done)
		p.ws.SetReadDeadline(time.Now()) // unblock the reader
		if p.opt.OnClose != nil {
			p.opt.OnClose()
		}
	})
}

// Shutdown stops reading new requests and waits for in-flight calls
// (bounded by ctx) so their answers go out. Calls still waiting halfway
// through — on an approval, say — see their context cancelled, so they
// too answer before the connection closes with "going away".
func (p *Peer) Shutdown(ctx context.Context) {
	p.drainMu.Lock()
	p.draining.Store(true)
	p.drainMu.Unlock()
	p.ws.SetReadDeadline(time.Now())
	waited := make(chan struct{})
	go func() { p.calls.Wait(); close(waited) }()
	half := time.Second
	if dl, ok := ctx.Deadline(); ok {
		half = time.Until(dl) / 2
	}
	select {
	case <-waited:
	case <-time.After(half):
		p.stop()
		select {
		case <-waited:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	p.goingAway.Store(true)
	p.Close()
}
