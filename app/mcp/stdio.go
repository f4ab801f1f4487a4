package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/rpc"
)

// DefaultMaxLine bounds one stdio message, as the daemon's default
// max_message_bytes does a frame.
const DefaultMaxLine = 16 << 20

// LineTransport is MCP over newline-delimited JSON (the stdio transport)
// that, unlike the SDK's, outlives bad input, as the reference TypeScript
// server does: a line that is not JSON (-32700), a batch, a message
// without "jsonrpc": "2.0" or one that is not a request, notification or
// response (-32600), and a line longer than MaxLine (-32600, the line is
// skipped) are each answered with an error, and the session goes on.
// Blank lines are ignored.
//
// Messages it writes keep "<", ">" and "&" as they are (the SDK's encoder
// writes them as \u003c…, six bytes each).
type LineTransport struct {
	In      io.Reader
	Out     io.Writer
	MaxLine int // 0: DefaultMaxLine
}

// Connect implements sdk.Transport.
func (t *LineTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	c := &lineConn{in: t.In, out: t.Out, incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), readErr: make(chan error, 1)}
	go c.readLoop(max)
	return c, nil
}

type lineConn struct {
	in        io.Reader
	out       io.Writer
	wmu       sync.Mutex
	incoming  chan jsonrpc.Message
	readErr   chan error
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			cl.Close()
		}
	})
	return nil
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m, nil
	case err := <-c.readErr:
		return nil, err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := encode(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

// encode is jsonrpc.EncodeMessage without HTML escapes (see
// unescapeHTML). A result, which the SDK has encoded already, is not
// encoded (compacted, checked) a second time.
func encode(msg jsonrpc.Message) ([]byte, error) {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 && r.ID.IsValid() {
		id, err := json.Marshal(r.ID.Raw())
		if err != nil {
			return nil, err
		}
		b := make([]byte, 0, len(r.Result)+len(id)+32)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"result":`...)
		b = append(b, unescapeHTML(r.Result)...)
		return append(b, '}'), nil
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		return err
	}
	return nil
}

// fail answers a bad line with a JSON-RPC error.
func (c *lineConn) fail(id json.RawMessage, code int64, msg string) {
	if b := failure(id, code, msg); b != nil {
		c.writeLine(b)
	}
}

// failure is a JSON-RPC error answering id (nil: null).
func failure(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return nil
	}
	return b
}

func (c *lineConn) readLoop(max int) {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		tooLong := len(line)+len(chunk) > max+1 // +1: the newline
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if tooLong {
				line = line[:0]
				if !c.skipLine(r) {
					c.readErr <- io.EOF
					return
				}
				c.fail(nil, jsonrpc.CodeInvalidRequest, "The message is longer than Corral accepts on one line; it was skipped.")
			}
			continue
		}
		if tooLong {
			c.fail(nil, jsonrpc.CodeInvalidRequest, "The message is longer than Corral accepts on one line; it was skipped.")
			line = line[:0]
		} else if len(bytes.TrimSpace(line)) > 0 {
			if msg := c.decode(line); msg != nil {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					return
				}
			}
			line = line[:0]
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr <- err
			} else {
				c.readErr <- io.EOF
			}
			return
		}
	}
}

// skipLine discards the rest of an over-long line; false at the end of input.
func (c *lineConn) skipLine(r *bufio.Reader) bool {
	for {
		_, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			return true
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return false
		}
	}
}

// decode turns one line into a message, or answers why it cannot and
// returns nil.
func (c *lineConn) decode(line []byte) jsonrpc.Message {
	return decode(line, c.fail)
}

// decode turns one message into a jsonrpc.Message, or answers why it
// cannot with fail and returns nil.
func decode(line []byte, fail func(id json.RawMessage, code int64, msg string)) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		fail(nil, jsonrpc.CodeParseError, "The line is not valid JSON.")
		return nil
	}
	if !utf8.Valid(line) {
		// Answered with its id when it has one: the client (and `corral
		// mcp`, relaying it) waits for that id, not for null.
		var id json.RawMessage
		if i := rpc.IDOf(line); string(i) != "null" {
			id = i
		}
		fail(id, jsonrpc.CodeParseError, "The line is not valid UTF-8 JSON.")
		return nil
	}
	switch line[0] {
	case '{':
	case '[':
		fail(nil, jsonrpc.CodeInvalidRequest, "Batches are not supported: send one message per line.")
		return nil
	default:
		fail(nil, jsonrpc.CodeInvalidRequest, "A message must be a JSON object.")
		return nil
	}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		fail(nil, jsonrpc.CodeInvalidRequest, "The message's members have the wrong types.")
		return nil
	}
	id := env.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		id = nil
	}
	if env.JSONRPC != "2.0" {
		fail(id, jsonrpc.CodeInvalidRequest, `The message must have "jsonrpc": "2.0".`)
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if env.Method == nil && env.ID != nil {
			return nil // a malformed response: there is nobody to answer
		}
		fail(id, jsonrpc.CodeInvalidRequest, "The message is not a valid JSON-RPC request: "+err.Error())
		return nil
	}
	return msg
}

// unescapeHTML undoes encoding/json's HTML escaping (\u003c, \u003e,
// \u0026) in an encoded JSON value; every other escape is kept. A
// backslash in JSON always starts an escape, so skipping the character
// after each one never misreads an escaped backslash followed by "u003c".
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}
