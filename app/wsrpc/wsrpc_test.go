package wsrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
	"corral/app/rpc"
	"corral/app/testkit/wsframe"
	"corral/core/errs"
	"corral/core/testkit/poll"
)

// fake is a Dispatcher with a few methods that exercise the transport:
//
//	echo {…}          answers its params
//	size {n}          answers a string of n bytes
//	wait {}           waits until its context ends, then answers why
//	whoami {}         answers the peer's Ident
//	fail {}           answers an error of kind not_found
type fake struct {
	waiting chan struct{} // wait says it has started here, if set
	stopped chan struct{} // and that its context ended here, if set
	built   chan struct{} // size says it has built its answer here, if set
}

func (f fake) Dispatch(ctx context.Context, p *Peer, req *rpc.Request) (any, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "size":
		var a struct{ N int }
		if err := rpc.DecodeParams(req.Params, &a); err != nil {
			return nil, err
		}
		if a.N < 0 || a.N > 1<<20 {
			return nil, errs.New(errs.InvalidParams, "", "n must be between 0 and 1 MiB.")
		}
		if f.built != nil {
			f.built <- struct{}{}
		}
		return xs(strings.Repeat("x", a.N)), nil
	case "wait":
		if f.waiting != nil {
			f.waiting <- struct{}{}
		}
		<-ctx.Done()
		if f.stopped != nil {
			f.stopped <- struct{}{}
		}
		return map[string]string{"stopped": ctx.Err().Error()}, nil
	case "whoami":
		return p.Ident(), nil
	case "fail":
		return nil, errs.New(errs.NotFound, "", "There is no such thing.")
	}
	return nil, rpc.MethodNotFound(req.Method)
}

// xs is size's answer, a string of x's that writes its own JSON, as
// file.read's text does (rpc.Appender): building a big answer costs a
// copy, not encoding/json's escaping, so a test that counts the answers
// built is not held back by building them.
type xs string

func (s xs) AppendJSON(b []byte) []byte {
	b = append(b, '"')
	return append(append(b, s...), '"')
}

// serve serves /ws with d over a real WebSocket on loopback; each Peer
// is handed to the test once it is made, and is identified by the
// upgrade request's X-Who header (the first eight; later ones are served
// unseen). It returns the server's base URL.
func serve(t testing.TB, d Dispatcher, o Options) (url string, peers chan *Peer) {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	peers = make(chan *Peer, 8)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		p := New(context.Background(), ws, d, r.Header.Get("X-Who"), o)
		select {
		case peers <- p:
		default: // the test does not look at this many
		}
		p.Serve()
	}))
	t.Cleanup(ts.Close)
	return ts.URL, peers
}

// dial opens a bare WebSocket to url, for frame-level tests.
func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"/ws", http.Header{"X-Who": {"tester"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func errorCode(v map[string]any) float64 {
	e, _ := v["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return e["code"].(float64)
}

// Every malformed frame gets its JSON-RPC error, with the request's id
// when it could be read, and the connection goes on answering; a frame
// over the limit closes the connection with 1009.
func TestMalformedFrames(t *testing.T) {
	t.Parallel()
	url, _ := serve(t, fake{}, Options{MaxMessageBytes: 4096})
	c := dial(t, url)
	for _, tc := range []struct {
		kind  int
		frame string
		code  float64
		id    any
	}{
		{websocket.TextMessage, `{`, rpc.CodeParse, nil},
		{websocket.TextMessage, "\xff\xfe", rpc.CodeParse, nil},
		{websocket.TextMessage, ``, rpc.CodeParse, nil},
		{websocket.TextMessage, `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, rpc.CodeInvalidRequest, nil},
		{websocket.TextMessage, `[]`, rpc.CodeInvalidRequest, nil},
		{websocket.BinaryMessage, `{"jsonrpc":"2.0","id":1,"method":"echo"}`, rpc.CodeInvalidRequest, nil},
		{websocket.TextMessage, `"just a string"`, rpc.CodeInvalidRequest, nil},
		{websocket.TextMessage, `{"jsonrpc":"1.0","id":5,"method":"echo"}`, rpc.CodeInvalidRequest, 5.0},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}`, rpc.CodeInvalidRequest, nil},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":"x","method":7}`, rpc.CodeInvalidRequest, "x"},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":6,"method":"echo","params":["a"]}`, rpc.CodeInvalidParams, 6.0},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":7,"method":"nope"}`, rpc.CodeMethodNotFound, 7.0},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":8,"method":"fail"}`, rpc.CodeServer, 8.0},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":9,"method":"$/cancelRequest","params":{}}`, rpc.CodeInvalidParams, 9.0},
	} {
		v := wsframe.RoundTrip(t, c, tc.kind, tc.frame)
		if errorCode(v) != tc.code || v["id"] != tc.id {
			t.Errorf("%q: got %v, want code %v id %v", tc.frame, v, tc.code, tc.id)
		}
	}
	// The connection is still usable.
	v := wsframe.RoundTrip(t, c, websocket.TextMessage, `{"jsonrpc":"2.0","id":"ok","method":"echo","params":{"a":1}}`)
	if r, _ := v["result"].(map[string]any); r["a"] != 1.0 {
		t.Fatalf("after malformed frames: %v", v)
	}

	// An oversized message closes with 1009.
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":"`+strings.Repeat("x", 5000)+`"}}`))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("oversized: %v, want close 1009", err)
	}
}

// Whatever a frame holds, it is answered with one JSON-RPC message (or,
// as a notification, not at all) and the connection goes on serving.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{`{`, `[]`, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","method":"echo"}`, `{"jsonrpc":"2.0","id":null,"method":"size","params":{"n":-1}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}`, "\x00", `{"id":1e999}`} {
		f.Add(s)
	}
	url, _ := serve(f, fake{}, Options{MaxMessageBytes: 1 << 16})
	f.Fuzz(func(t *testing.T, frame string) {
		c := dial(t, url)
		c.WriteMessage(websocket.TextMessage, []byte(frame))
		c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"probe","method":"echo"}`))
		for {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("after %q: %v", frame, err)
			}
			var v map[string]json.RawMessage
			if err := json.Unmarshal(msg, &v); err != nil {
				t.Fatalf("answer to %q: %q is not JSON: %v", frame, msg, err)
			}
			_, result := v["result"]
			_, failed := v["error"]
			if string(v["jsonrpc"]) != `"2.0"` || result == failed {
				t.Fatalf("answer to %q: %s", frame, msg)
			}
			if string(v["id"]) == `"probe"` {
				return
			}
		}
	})
}

// The Dispatcher is told who the peer is: what it was opened with.
func TestDispatcherSeesIdent(t *testing.T) {
	t.Parallel()
	url, _ := serve(t, fake{}, Options{})
	v := wsframe.RoundTrip(t, dial(t, url), websocket.TextMessage, `{"jsonrpc":"2.0","id":1,"method":"whoami"}`)
	if v["result"] != "tester" {
		t.Fatalf("whoami: %v", v)
	}
}

// Many calls in flight on one connection each get their own answer,
// whole: answers of different sizes share the one writer and the pooled
// buffers (run with -race).
func TestAnswersArriveWhole(t *testing.T) {
	t.Parallel()
	url, _ := serve(t, fake{}, Options{})
	c, err := client.Dial(context.Background(), url, "unused")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		n := 1 << (8 + i%8) // 256 B to 32 KiB
		wg.Go(func() {
			var got string
			if err := c.CallInto(context.Background(), "size", map[string]int{"n": n}, &got); err != nil {
				t.Error(err)
				return
			}
			if got != strings.Repeat("x", n) {
				t.Errorf("size %d: got %d bytes", n, len(got))
			}
		})
	}
	wg.Wait()
}

// $/cancelRequest reaches a call in flight on the same connection, also
// when every worker is busy: the call's context ends, it answers, and
// the connection goes on answering.
func TestCancelReachesACallInFlight(t *testing.T) {
	t.Parallel()
	f := fake{waiting: make(chan struct{}, maxInFlight), stopped: make(chan struct{}, 2*maxInFlight)}
	url, _ := serve(t, f, Options{})
	c, err := client.Dial(context.Background(), url, "unused")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Every worker waits: the cancel cannot be queued behind them.
	for range maxInFlight - 1 {
		go c.Call(t.Context(), "wait", nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.Call(ctx, "wait", nil)
	for range maxInFlight {
		<-f.waiting
	}
	cancel() // the client sends $/cancelRequest for the call's id
	select {
	case <-f.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's context did not end while every worker was busy")
	}
	select {
	case <-f.stopped:
		t.Fatal("a call that was not cancelled stopped too")
	default:
	}

	// The call saw its context end: ask again with a raw cancel request
	// (with an id), which says whether it found the call.
	ws := dial(t, url)
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"w","method":"wait"}`))
	<-f.waiting
	v := wsframe.RoundTrip(t, ws, websocket.TextMessage, `{"jsonrpc":"2.0","id":"c","method":"$/cancelRequest","params":{"id":"w"}}`)
	answers := map[any]map[string]any{v["id"]: v}
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	v = nil
	json.Unmarshal(msg, &v)
	answers[v["id"]] = v
	if r, _ := answers["c"]["result"].(map[string]any); r["cancelled"] != true {
		t.Errorf("the cancel request's answer: %v", answers["c"])
	}
	if r, _ := answers["w"]["result"].(map[string]any); r["stopped"] != context.Canceled.Error() {
		t.Errorf("the cancelled call's answer: %v", answers["w"])
	}
	v = wsframe.RoundTrip(t, ws, websocket.TextMessage, `{"jsonrpc":"2.0","id":"c2","method":"$/cancelRequest","params":{"id":"w"}}`)
	if r, _ := v["result"].(map[string]any); r["cancelled"] != false {
		t.Errorf("cancelling a call that has answered: %v", v)
	}
}

// With every worker busy, calls the peer sends on wait in the backlog and
// the reader goes on reading: a $/cancelRequest sent after them still
// reaches the call it names, and the waiting calls run once a worker is
// free, in the order sent.
func TestCancelReachesACallBehindWaitingCalls(t *testing.T) {
	t.Parallel()
	f := fake{waiting: make(chan struct{}, maxInFlight+2), stopped: make(chan struct{}, maxInFlight+2)}
	url, _ := serve(t, f, Options{})
	ws := dial(t, url)
	send := func(frame string) {
		t.Helper()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range maxInFlight {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"wait"}`, i))
	}
	for range maxInFlight {
		<-f.waiting
	}
	send(`{"jsonrpc":"2.0","id":"later","method":"wait"}`)
	send(`{"jsonrpc":"2.0","id":"last","method":"echo","params":{"n":1}}`)
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("no answer after cancelling call 7 behind two waiting calls: %v", err)
	}
	var v struct {
		ID     any
		Result map[string]string
	}
	json.Unmarshal(msg, &v)
	if v.ID != float64(7) || v.Result["stopped"] != context.Canceled.Error() {
		t.Fatalf("the first answer: %s; want call 7's, cancelled", msg)
	}
	// Call 7's worker takes the first waiting call.
	select {
	case <-f.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the call waiting in the backlog did not start when a worker was free")
	}
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"later"}}`)
	for _, want := range []string{`"later"`, `"last"`} {
		_, msg, err := ws.ReadMessage()
		if err != nil || !strings.Contains(string(msg), `"id":`+want) {
			t.Fatalf("answer %s: %s %v", want, msg, err)
		}
	}
}

// Ids may repeat: a call that answers forgets only itself, so a
// $/cancelRequest still reaches the running call that has the same id.
// (Each answer forgot the oldest call with its id, so a quick call sent
// with a long call's id made the long one uncancellable.)
func TestCancelReachesACallWhoseIdWasReused(t *testing.T) {
	t.Parallel()
	f := fake{waiting: make(chan struct{}, 1)}
	url, _ := serve(t, f, Options{})
	ws := dial(t, url)
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":5,"method":"wait"}`))
	<-f.waiting
	if v := wsframe.RoundTrip(t, ws, websocket.TextMessage, `{"jsonrpc":"2.0","id":5,"method":"echo","params":{"x":1}}`); v["result"] == nil {
		t.Fatalf("the second call with id 5 answered %v", v)
	}
	v := wsframe.RoundTrip(t, ws, websocket.TextMessage, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}`)
	if r, _ := v["result"].(map[string]any); r["stopped"] != context.Canceled.Error() {
		t.Fatalf("after $/cancelRequest for the running call 5: %v", v)
	}
}

// A call cancelled while it waits in the backlog never starts: it answers
// that it was cancelled. (It started with its context already ended, and
// a method that does not look, such as a file write, did its work: a
// file.write cancelled while an agent's 64 commands ran was written in 4
// of 6 tries.)
func TestCallCancelledWhileWaitingNeverStarts(t *testing.T) {
	t.Parallel()
	f := fake{waiting: make(chan struct{}, maxInFlight)}
	url, _ := serve(t, f, Options{})
	ws := dial(t, url)
	for i := range maxInFlight {
		ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"wait"}`, i))
	}
	for range maxInFlight {
		<-f.waiting
	}
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"e","method":"echo","params":{"x":1}}`))
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"e"}}`))
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":0}}`))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			ID    any
			Error *struct {
				Message string
				Data    struct{ Kind string }
			}
		}
		json.Unmarshal(msg, &v)
		if v.ID != "e" {
			continue
		}
		if v.Error == nil || v.Error.Data.Kind != "unavailable" || !strings.Contains(v.Error.Message, "cancelled") {
			t.Fatalf("the call cancelled while it waited answered %s", msg)
		}
		return
	}
}

// Peers given the same Options.Calls share its places: while one peer's
// calls hold them all, another's call waits (and answers that it was
// cancelled if it is cancelled then), and runs once a place is given back.
// One agent key's connections share them, so its 128 connections cannot
// run 128 × maxInFlight calls at once.
func TestPeersShareCalls(t *testing.T) {
	t.Parallel()
	const places = 4
	f := fake{waiting: make(chan struct{}, places), stopped: make(chan struct{}, places)}
	url, _ := serve(t, f, Options{Calls: make(chan struct{}, places)})
	a, b := dial(t, url), dial(t, url)
	for i := range places {
		a.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"a%d","method":"wait"}`, i))
	}
	for range places {
		<-f.waiting
	}
	b.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"b1","method":"echo","params":{"x":1}}`))
	v := wsframe.RoundTrip(t, b, websocket.TextMessage, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b1"}}`)
	if e, _ := v["error"].(map[string]any); v["id"] != "b1" || e == nil || e["data"].(map[string]any)["kind"] != "unavailable" {
		t.Fatalf("a call made while another peer's calls held every place answered %v, want that it was cancelled while it waited", v)
	}

	// A place given back lets the other peer's call run.
	a.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a0"}}`))
	v = wsframe.RoundTrip(t, b, websocket.TextMessage, `{"jsonrpc":"2.0","id":"b2","method":"echo","params":{"x":2}}`)
	if r, _ := v["result"].(map[string]any); v["id"] != "b2" || r["x"] != 2.0 {
		t.Fatalf("once a place was given back, the call answered %v", v)
	}
}

// A call that waits for a place in Options.Calls waits on a worker with
// its frame: it counts in the backlog's bytes, shared between the peers
// that share Options.Waiting (one agent key's connections). While none of
// their calls can start, they hold BacklogBytes of frames between them
// (each also one waiting call beyond, and the one its reader has in
// hand), not maxInFlight frames of any size each besides a backlog each.
// Against a daemon, six connections of one agent key, each with 72
// file.write calls of 1 MiB behind the key's 64 places held by sleeping
// commands, took it from 36 MB to 640 MB; 127 connections of a full
// backlog of tiny calls, to 565 MB.
// The test sets BacklogBytes to 256 KiB, not the default 8 MiB, and sends
// frames of 32 KiB: as many frames fill it, and under -race the echo of
// 32 MiB of JSON took ten seconds.
func TestCallsWaitingAreBoundedInBytesAcrossPeers(t *testing.T) {
	t.Parallel()
	calls := make(chan struct{}, 1)
	calls <- struct{}{} // another peer's call holds the only place
	const backlogBytes = 256 << 10
	url, peers := serve(t, fake{}, Options{Calls: calls, Waiting: new(Waiting), BacklogBytes: backlogBytes})
	const frameSize, sent = 32 << 10, 16
	ps, wss := flood(t, url, peers, 2, sent, frameSize)
	held := func() int { return heldCalls(ps) }
	least := backlogBytes/frameSize + 2 // and the one in each reader's hand
	most := least + 2                   // and one waiting call each beyond
	poll.EventuallyNil(t, 10*time.Second, func() error {
		if n := held(); n < least {
			return fmt.Errorf("they read %d", n)
		}
		return nil
	}, "the readers to read %d calls", least)
	// They have read all they may; a moment later they still have read
	// no more.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if n := held(); n > most {
			t.Fatalf("two peers read %d calls of %d KiB while none could start, want at most %d (BacklogBytes between them)", n, frameSize>>10, most)
		}
	}
	<-calls // the place comes free: every call answers, in turn
	for _, ws := range wss {
		ws.SetReadDeadline(time.Now().Add(20 * time.Second))
		for range sent {
			_, msg, err := ws.ReadMessage()
			if err != nil || !strings.Contains(string(msg), `"result":{"pad"`) {
				t.Fatalf("answer: %.80s %v", msg, err)
			}
		}
	}
}

// The send queue holds SendQueue frames: the push after that finds it
// full and drops the connection rather than wait.
func TestQueueBound(t *testing.T) {
	t.Parallel()
	p := unserved(t)
	for i := range SendQueue {
		if !p.Notify("test.push", i) {
			t.Fatalf("push %d of %d refused", i+1, SendQueue)
		}
	}
	if p.Notify("test.push", "one too many") {
		t.Fatal("a push past the queue's bound was taken")
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("the connection whose queue overflowed is not finished")
	}
}

// The send queue holds QueueBytes however few frames that is: the push
// that does not fit drops the connection, as one past SendQueue does.
func TestQueueBoundInBytes(t *testing.T) {
	t.Parallel()
	p := unserved(t)
	mib := make([]byte, 1<<20)
	for i := range QueueBytes >> 20 {
		if !p.Push(mib) {
			t.Fatalf("push of 1 MiB %d of %d refused", i+1, QueueBytes>>20)
		}
	}
	if p.Push([]byte("x")) {
		t.Fatal("a push past the queue's bound in bytes was taken")
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("the connection whose queue overflowed is not finished")
	}
}

// unserved is a Peer whose writer never runs: nothing leaves its queue.
func unserved(t *testing.T) *Peer {
	t.Helper()
	p, _ := unwritten(t, nil)
	return p
}

// unwritten is a Peer whose writer never runs, with the test's end of its
// socket; if d is set, its reader reads calls for d.
func unwritten(t *testing.T, d Dispatcher) (*Peer, *websocket.Conn) {
	t.Helper()
	upgraded := make(chan *websocket.Conn, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err == nil {
			upgraded <- ws
		}
	}))
	t.Cleanup(ts.Close)
	ws := dial(t, ts.URL)
	read := d != nil
	if !read {
		d = fake{}
	}
	p := New(context.Background(), <-upgraded, d, nil, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { p.ws.Close() })
	if read {
		go p.readLoop()
		t.Cleanup(p.Close)
	}
	return p, ws
}

// A client that stops reading is dropped once its queue is full, while a
// client that reads gets every push; pushing never waits for either (the
// loop below would hang on the slow client otherwise).
func TestSlowClientIsDroppedOthersKeepTheirPushes(t *testing.T) {
	t.Parallel()
	url, peers := serve(t, fake{}, Options{})
	_ = dial(t, url) // never read
	slow := <-peers
	fastWS := dial(t, url)
	fast := <-peers

	payload := strings.Repeat("x", 16<<10)
	const most = 100_000 // far more than the socket buffers and the queue hold
	got := make(chan int)
	go func() {
		n := 0
		for {
			fastWS.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, _, err := fastWS.ReadMessage(); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	// Each push is timed alone: the loop as a whole may take long on a
	// busy machine, but no push may wait for the slow client.
	var longest time.Duration
	push := func(p *Peer) bool {
		start := time.Now()
		ok := p.Notify("test.push", payload)
		longest = max(longest, time.Since(start))
		return ok
	}
	sent := 0
	for sent < most && push(slow) {
		if !push(fast) {
			t.Fatal("the reading client was dropped")
		}
		sent++
	}
	if sent == most {
		t.Fatalf("the client that does not read was never dropped after %d pushes", sent)
	}
	if longest >= writeWait/2 {
		t.Errorf("the longest push took %v: a push waited for the slow client's write deadline (%v)", longest, writeWait)
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("the slow connection is not finished")
	}
	// The fast client goes on getting pushes after the slow one is gone.
	for range 10 {
		if !fast.Notify("test.push", payload) {
			t.Fatal("the reading client was dropped")
		}
		sent++
	}
	fast.goingAway.Store(true) // send what is queued, then close
	fast.Close()
	if n := <-got; n != sent {
		t.Fatalf("the reading client got %d pushes, want %d", n, sent)
	}
}

// A peer that sends calls and never reads their answers gets at most
// QueueBytes of them queued, however few frames that is: the calls wait
// for room, and the reader for a call to end. Counted in frames alone, the
// queue would hold a thousand image reads (13 MiB each) for a peer that
// reads nothing. The writer does not run here, so nothing leaves the
// queue and no socket buffer takes any: the answers built stop at what
// the queue holds and one waiting for room on each worker, and stay
// there, while the other calls wait in the backlog. (That the writer
// drops such a peer is TestUnreadPeerIsDropped.)
func TestUnreadAnswersAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	const size, calls = 256 << 10, 400
	built := make(chan struct{}, calls)
	p, ws := unwritten(t, fake{built: built})
	go func() {
		for i := range calls {
			if ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"size","params":{"n":%d}}`, i, size)) != nil {
				return
			}
		}
	}()
	most := QueueBytes/size + maxInFlight // the queue, and one on each worker
	poll.EventuallyNil(t, 20*time.Second, func() error {
		n := len(built)
		if n > most {
			t.Fatalf("%d answers of %d KiB were built for a peer that reads none (%d MiB); want at most %d", n, size>>10, n*size>>20, most)
		}
		if n == len(p.send)+maxInFlight && p.mine.Load() == int64(calls-n) {
			return nil // every call read; every worker waits for room that never comes
		}
		return fmt.Errorf("%d answers built, %d queued, %d calls waiting", n, len(p.send), p.mine.Load())
	}, "every call read, and every worker waiting with an answer")
}

// A peer that reads nothing is dropped once the writer has waited
// Options.WriteWait for it to take a frame: 1 s here, not the default
// 10 s. Its calls' answers are far more than the socket buffers take.
func TestUnreadPeerIsDropped(t *testing.T) {
	t.Parallel()
	const size, calls = 256 << 10, 400
	o := Options{WriteWait: time.Second}
	url, peers := serve(t, fake{}, o)
	ws := dial(t, url) // never read
	p := <-peers
	go func() {
		for i := range calls {
			if ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"size","params":{"n":%d}}`, i, size)) != nil {
				return
			}
		}
	}()
	select {
	case <-p.Done(): // the writer gave up on the peer
	case <-time.After(o.WriteWait + 20*time.Second):
		t.Fatal("the peer that reads nothing was not dropped")
	}
}

// Shutdown lets a call in flight answer before the connection closes
// with 1001: the call's context is cancelled halfway to the deadline, and
// its answer is written before the goodbye.
func TestShutdownAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	f := fake{waiting: make(chan struct{}, 1)}
	closed := make(chan struct{})
	url, peers := serve(t, f, Options{OnClose: func() { close(closed) }})
	ws := dial(t, url)
	p := <-peers
	ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"wait"}`))
	<-f.waiting
	// Halfway (1 s) the call is cancelled; the rest leaves a busy machine
	// time to write its answer.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.Shutdown(ctx)
	<-closed
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := ws.ReadMessage()
	if err != nil || !strings.Contains(string(msg), `"stopped":"context canceled"`) {
		t.Fatalf("the call in flight answered %s, %v", msg, err)
	}
	_, _, err = ws.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("after the answer: %v, want close 1001", err)
	}
}

// TestFramesOfOneKeyBoundedAcrossPeers: the large frames one agent's
// peers make Corral hold while none of their calls can run stay within
// Options.BigFrames, however many peers the agent opens. Each peer may
// keep one waiting call beyond BacklogBytes (so that no peer of a key
// waits on the others) and its reader holds the next frame: without the
// places for large frames that was 2 frames a peer. Attack on the running
// daemon (root): one agent opened 128 /ws connections with a 15 MiB
// file.write in flight on each, and the daemon's RSS went from 110 MiB to
// 4.7 GiB (the machine lost 5.9 GiB of available memory, the attacker's
// client included), with 2 or 3 of the writes answered in 30 s. 128 peers
// × 2 frames × 16 MiB (max_message_bytes) is 4 GiB, besides the 64 calls
// that run. This fails without the places (8 peers held 14 calls).
func TestFramesOfOneKeyBoundedAcrossPeers(t *testing.T) {
	t.Parallel()
	calls := make(chan struct{}, 1)
	calls <- struct{}{} // another peer's call holds the key's only place
	const backlogBytes = 256 << 10
	url, peers := serve(t, fake{}, Options{Calls: calls, Waiting: new(Waiting), BacklogBytes: backlogBytes,
		BigFrameBytes: 32 << 10, BigFrames: 2})
	const frameSize, sent, npeers = 64 << 10, 8, 8
	ps, _ := flood(t, url, peers, npeers, sent, frameSize)
	held := func() int { return heldCalls(ps) }
	most := backlogBytes/frameSize + 2
	// Give the readers a second to read what they may.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if n := held(); n > most {
			t.Fatalf("%d peers of one key hold %d calls of %d KiB while none can run, want at most %d (BacklogBytes and the frame in one reader's hand)", npeers, n, frameSize>>10, most)
		}
	}
}

// flood dials n peers to url (taking each from peers) and has each send
// sent echo calls of frameSize bytes, from a goroutine of its own; it
// returns the peers and their connections.
func flood(t *testing.T, url string, peers <-chan *Peer, n, sent, frameSize int) ([]*Peer, []*websocket.Conn) {
	t.Helper()
	pad := strings.Repeat("x", frameSize-64)
	var ps []*Peer
	var wss []*websocket.Conn
	for range n {
		ws := dial(t, url)
		wss, ps = append(wss, ws), append(ps, <-peers)
		go func() {
			for i := range sent {
				if ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"pad":%q}}`, i, pad)) != nil {
					return
				}
			}
		}()
	}
	return ps, wss
}

// heldCalls counts the frames the peers hold in flight between them.
func heldCalls(ps []*Peer) (n int) {
	for _, p := range ps {
		p.flightMu.Lock()
		for _, l := range p.inflight {
			n += len(l)
		}
		p.flightMu.Unlock()
	}
	return n
}
