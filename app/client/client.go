// Package client is a small JSON-RPC client for Corral's /ws endpoint,
// used by the command line (corral call, audit, approve, mcp) and by
// tests.
//
// Guarantees: calls may be made concurrently on one Client, each matched
// to its answer by its own id. An answer never waits behind unread
// notifications: Notifications holds 1024 and drops newer ones when full,
// and a CallNotify listener runs on the reading goroutine. A call whose
// ctx ends returns ctx.Err() at once and tells the daemon
// ($/cancelRequest), so a command is killed and a question to the owner
// withdrawn there too. When the connection ends, every waiting call
// returns an error and Done is closed. Frames are written one at a time,
// each within 30 s, with "<", ">" and "&" unescaped.
//
// Not guaranteed: a Client is one connection: it neither reconnects nor
// repeats a call (corral mcp dials a new one itself). Notifications that
// arrive while nobody reads them are lost, and a CallNotify listener that
// blocks stalls every answer on the connection. Frames up to 1 GiB are
// read: the client trusts the daemon it dialled.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/rpc"
)

// Error is a JSON-RPC error answered by the server.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	} `json:"data"`
}

func (e *Error) Error() string { return e.Message }

// Notification is a server-sent notification.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Client is one connection. Calls may be made concurrently.
type Client struct {
	ws     *websocket.Conn
	wmu    sync.Mutex
	mu     sync.Mutex
	nextID int64
	wait   map[string]chan reply
	listen map[string]func(Notification) // by request id: see CallNotify
	notes  chan Notification
	done   chan struct{}
	err    error
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// DialError is why Dial failed: Status is the HTTP status when the server
// answered and refused the upgrade, 0 when nothing usable answered.
type DialError struct {
	URL    string
	Status int
	Err    error
}

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// Dial connects to base (http://HOST:PORT) with a bearer key. Notifications
// are delivered on Notifications(); while its buffer is full, newer ones
// are dropped rather than blocking replies.
func Dial(ctx context.Context, base, key string) (*Client, error) {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	default:
		return nil, &DialError{URL: base, Err: fmt.Errorf("%q is not an http:// or https:// URL", base)}
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	d := websocket.Dialer{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	ws, resp, err := d.DialContext(ctx, u+"/ws", h)
	if err != nil {
		if resp != nil {
			return nil, &DialError{URL: base, Status: resp.StatusCode, Err: fmt.Errorf("connect to %s: %s", base, resp.Status)}
		}
		return nil, &DialError{URL: base, Err: fmt.Errorf("connect to %s: %w", base, err)}
	}
	ws.SetReadLimit(1 << 30)
	c := &Client{ws: ws, wait: map[string]chan reply{}, notes: make(chan Notification, 1024), done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// Notifications delivers server notifications in order.
func (c *Client) Notifications() <-chan Notification { return c.notes }

// Close closes the connection.
func (c *Client) Close() error {
	c.wmu.Lock()
	c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	c.wmu.Unlock()
	return c.ws.Close()
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.done }

func (c *Client) readLoop() {
	defer close(c.done)
	defer close(c.notes)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.wait {
				close(ch)
				delete(c.wait, id)
			}
			c.mu.Unlock()
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			reply
		}
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		if msg.Method != "" && msg.ID == nil {
			if f := c.listener(msg.Params); f != nil {
				f(Notification{Method: msg.Method, Params: msg.Params})
				continue
			}
			select {
			case c.notes <- Notification{Method: msg.Method, Params: msg.Params}:
			default: // nobody reads notifications fast enough: drop
			}
			continue
		}
		c.mu.Lock()
		ch, ok := c.wait[string(msg.ID)]
		delete(c.wait, string(msg.ID))
		c.mu.Unlock()
		if ok {
			ch <- msg.reply
		}
	}
}

// listener is the CallNotify function for a notification about a call
// (params.request_id), if any.
func (c *Client) listener(params json.RawMessage) func(Notification) {
	c.mu.Lock()
	n := len(c.listen)
	c.mu.Unlock()
	if n == 0 {
		return nil
	}
	var p struct {
		RequestID json.RawMessage `json:"request_id"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listen[string(p.RequestID)]
}

// Call sends one request and waits for its answer. A JSON-RPC error is
// returned as *Error. When ctx ends first, the daemon is told to cancel
// the call ($/cancelRequest).
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.CallNotify(ctx, method, params, nil)
}

// CallNotify is Call that hands the notifications about this call
// (command.output, request.progress: those whose request_id is its id)
// to onNote, on the reading goroutine, instead of Notifications().
func (c *Client) CallNotify(ctx context.Context, method string, params any, onNote func(Notification)) (json.RawMessage, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan reply, 1)
	c.wait[id] = ch
	if onNote != nil {
		if c.listen == nil {
			c.listen = map[string]func(Notification){}
		}
		c.listen[id] = onNote
		defer func() {
			c.mu.Lock()
			delete(c.listen, id)
			c.mu.Unlock()
		}()
	}
	c.mu.Unlock()
	// rpc.Marshal, not json.Marshal: "<", ">" and "&" stay one byte each,
	// so a frame never grows past the daemon's limit by escaping.
	b, err := rpc.Marshal(request{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method, Params: params})
	if err != nil {
		c.forget(id)
		return nil, err
	}
	if err := c.write(b); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errors.New("connection closed before the answer came")
		}
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		// Tell the daemon, so that the call stops there too: a command is
		// killed, a question to the owner withdrawn.
		if c.forget(id) {
			if b, err := rpc.Notify(rpc.CancelRequest, map[string]json.RawMessage{"id": json.RawMessage(id)}); err == nil {
				c.write(b)
			}
		}
		return nil, ctx.Err()
	}
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// forget stops waiting for id's answer; it reports whether it was still
// awaited.
func (c *Client) forget(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.wait[id]
	delete(c.wait, id)
	return ok
}

// write sends one text frame, one writer at a time.
func (c *Client) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// writeWait bounds one frame's write: a daemon that does not read is gone.
const writeWait = 30 * time.Second

// CallInto is Call decoding the result into v.
func (c *Client) CallInto(ctx context.Context, method string, params, v any) error {
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Kind is Corral's error kind (docs/protocol.md section 7), or "" for JSON-RPC
// protocol errors.
func (e *Error) Kind() string { return e.Data.Kind }
