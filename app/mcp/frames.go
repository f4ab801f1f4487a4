package mcp

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Frames is a connection that carries one message a frame: a WebSocket
// (gorilla's *websocket.Conn has these methods).
type Frames interface {
	ReadMessage() (messageType int, p []byte, err error)
	WriteMessage(messageType int, data []byte) error
	Close() error
}

// textFrame is a WebSocket text frame's type.
const textFrame = 1

// FrameTransport is MCP over Frames, one JSON-RPC message a frame: what
// `corral mcp` relays its stdio lines over, unchanged, to the daemon. It
// answers bad input as LineTransport does (a frame that is not JSON, a
// batch, a message that is not JSON-RPC 2.0), and the session goes on; it
// writes "<", ">" and "&" as they are.
type FrameTransport struct {
	Conn Frames
}

// Connect implements sdk.Transport.
func (t *FrameTransport) Connect(context.Context) (sdk.Connection, error) {
	return &frameConn{f: t.Conn, closed: make(chan struct{})}, nil
}

type frameConn struct {
	f         Frames
	wmu       sync.Mutex
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *frameConn) SessionID() string { return "" }

func (c *frameConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.f.Close()
	})
	return nil
}

// Read returns the next message; the connection's end is io.EOF. ctx is
// not watched: the SDK reads on one goroutine until Close, which ends a
// read in progress.
func (c *frameConn) Read(context.Context) (jsonrpc.Message, error) {
	for {
		_, data, err := c.f.ReadMessage()
		if err != nil {
			return nil, io.EOF
		}
		if msg := decode(data, c.fail); msg != nil {
			return msg, nil
		}
	}
}

func (c *frameConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := encode(msg)
	if err != nil {
		return err
	}
	return c.send(b)
}

func (c *frameConn) send(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.f.WriteMessage(textFrame, b)
}

func (c *frameConn) fail(id json.RawMessage, code int64, msg string) {
	if b := failure(id, code, msg); b != nil {
		c.send(b)
	}
}
