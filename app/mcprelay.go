package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// errNoMCPWebSocket: the daemon does not serve MCP over a WebSocket on
// /mcp (one older than `corral mcp`); the adapter serves instead.
var errNoMCPWebSocket = errors.New("the daemon does not serve MCP over a WebSocket")

// dialMCP opens an MCP session over a WebSocket on base's /mcp with key.
func dialMCP(ctx context.Context, base, key string) (*websocket.Conn, error) {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	default:
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", base)
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	d := websocket.Dialer{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	ws, resp, err := d.DialContext(ctx, u+"/mcp", h)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusUnauthorized {
			return nil, fmt.Errorf("%w (%s)", errNoMCPWebSocket, resp.Status)
		}
		return nil, err
	}
	ws.SetReadLimit(1 << 30)
	return ws, nil
}

// relay is `corral mcp` when the daemon serves MCP itself: each line on
// stdin goes to the daemon as one WebSocket frame, and each frame back
// is one line on stdout, neither decoded nor encoded again (the daemon's
// MCP server answers bad input as the stdio transport would).
//
// When the daemon restarts, the next line dials it again, and the session
// is opened there as the client opened it (its initialize, answered to
// nobody, and notifications/initialized), so the client goes on. A
// request that was under way when the connection broke is answered with
// a sentence saying it may or may not have completed (a tool call as an
// isError result); one that cannot reach the daemon, with a sentence
// saying it was not made.
type relay struct {
	dial    func(ctx context.Context) (*websocket.Conn, error)
	out     io.Writer
	maxLine int

	omu sync.Mutex // out

	mu      sync.Mutex
	ws      *websocket.Conn   // nil: none (broken, or not dialled yet)
	pending map[string]string // requests sent on ws and not answered: id (as normalID has it) → method
	init    json.RawMessage   // the client's initialize params, for a new connection

	wmu sync.Mutex // writes on ws
}

// resumeID is the id of the initialize a new connection is opened with.
const resumeID = `"corral.resume"`

func (r *relay) run(ctx context.Context, in io.Reader) error {
	defer r.hangUp()
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > r.maxLine+1 {
			line = line[:0]
			if errors.Is(err, bufio.ErrBufferFull) {
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
			}
			r.answerErr(nil, -32600, "The message is longer than Corral accepts on one line; it was skipped.")
		} else {
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				r.forward(ctx, msg)
			}
			line = line[:0]
		}
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// forward sends one message to the daemon, dialling it if need be.
func (r *relay) forward(ctx context.Context, msg []byte) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(msg, &env) // not JSON: the daemon says so
	id := normalID(env.ID)
	if env.Method == "initialize" {
		var p struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(msg, &p) == nil && len(p.Params) > 0 {
			r.mu.Lock()
			r.init = p.Params
			r.mu.Unlock()
		}
	}
	ws, err := r.conn(ctx)
	if err != nil {
		if id != "" && env.Method != "" {
			r.answerErr(env.ID, -32603, "Corral cannot be reached, so the call was not made: "+err.Error(), env.Method)
		}
		return
	}
	if id != "" && env.Method != "" {
		r.mu.Lock()
		if r.ws == ws {
			r.pending[id] = env.Method
		}
		r.mu.Unlock()
	}
	r.wmu.Lock()
	err = ws.WriteMessage(websocket.TextMessage, msg)
	r.wmu.Unlock()
	if err != nil {
		ws.Close() // the reader answers what was pending, this one too
	}
}

// conn is the connection in use, dialling one (and opening the session
// there) if there is none.
func (r *relay) conn(ctx context.Context) (*websocket.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ws != nil {
		return r.ws, nil
	}
	ws, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	if r.init != nil {
		open := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":%s}`, resumeID, r.init)
		if err := ws.WriteMessage(websocket.TextMessage, open); err == nil {
			err = ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		}
		if err != nil {
			ws.Close()
			return nil, err
		}
	}
	r.ws = ws
	r.pending = map[string]string{}
	go r.read(ws)
	return ws, nil
}

// read copies ws's frames to out until ws ends, then answers what was
// pending on it.
func (r *relay) read(ws *websocket.Conn) {
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			break
		}
		if id, isAnswer := answerID(msg); isAnswer {
			if id == resumeID {
				continue // the answer to the initialize conn made
			}
			r.mu.Lock()
			if r.ws == ws {
				delete(r.pending, id)
			}
			r.mu.Unlock()
		}
		r.write(msg)
	}
	ws.Close()
	r.mu.Lock()
	var lost map[string]string
	if r.ws == ws {
		lost, r.ws, r.pending = r.pending, nil, nil
	}
	r.mu.Unlock()
	for id, method := range lost {
		r.answerErr(json.RawMessage(id), -32603, "The connection to Corral broke before it answered (was it restarted?); the call may or may not have completed. Check before repeating it.", method)
	}
}

// hangUp closes the connection in use: the daemon cancels what is still
// running for it.
func (r *relay) hangUp() {
	r.mu.Lock()
	ws := r.ws
	r.mu.Unlock()
	if ws != nil {
		r.wmu.Lock()
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
		r.wmu.Unlock()
		ws.Close()
	}
}

func (r *relay) write(msg []byte) {
	r.omu.Lock()
	defer r.omu.Unlock()
	r.out.Write(append(msg, '\n'))
}

// answerErr answers request id (nil: null) of method: a tool call with
// an isError result saying msg, anything else with a JSON-RPC error.
func (r *relay) answerErr(id json.RawMessage, code int, msg string, method ...string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	var b []byte
	if len(method) > 0 && method[0] == "tools/call" {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"content": []map[string]string{{"type": "text", "text": msg}}, "isError": true}})
	} else {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	}
	r.write(b)
}

// normalID is a request id as one JSON text (1 and 1.0 alike), "" for
// none or null.
func normalID(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// answerPrefix starts every answer the daemon's MCP server writes; a
// request it makes has "method" after the id.
var answerPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// answerID is the id of an answer (a result or an error) as normalID has
// it, reading no more of msg than the id.
func answerID(msg []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(msg, answerPrefix)
	if !ok {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	var v any
	if dec.Decode(&v) != nil || v == nil {
		return "", false
	}
	after := rest[dec.InputOffset():]
	if !bytes.HasPrefix(after, []byte(`,"result"`)) && !bytes.HasPrefix(after, []byte(`,"error"`)) {
		return "", false
	}
	b, _ := json.Marshal(v)
	return string(b), true
}
