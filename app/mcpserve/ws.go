package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/mcp"
	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/sandbox"
)

// serveWebSocket serves MCP over a WebSocket on /mcp, one JSON-RPC
// message a text frame: `corral mcp` relays its stdio lines here as they
// are, so the daemon's in-process MCP server (the tools of /mcp) decodes
// each message once and encodes each answer once, where `corral mcp`
// used to decode, call over /ws, decode the answer and encode it again.
// The connection is one MCP session, for as long as it lasts; its end
// cancels the calls still running (a command is killed, a question to the
// owner withdrawn). The key is checked again on every call: a key removed
// or rotated ends the session at its next call. The caller has passed
// the origin check and authentication, and holds one of its key's places
// for connections until this returns.
func (ms *Handler) serveWebSocket(w http.ResponseWriter, r *http.Request, caller sandbox.Caller, token string) {
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		CheckOrigin:      func(*http.Request) bool { return true }, // checked exactly by the server before Serve
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  64 << 10,
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	defer ws.Close()
	ws.SetReadLimit(ms.o.MaxMessageBytes)
	ws.SetReadDeadline(time.Time{}) // the server's ReadTimeout is for request bodies
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	b := wsBackend{backend: backend{srv: ms.srv, caller: caller}, token: token, hangUp: func() { ws.Close() }}
	srv := mcp.NewServer(b, ms.o.Version, ms.mcpOptions(caller, nil))
	ss, err := srv.Connect(ctx, &mcp.FrameTransport{Conn: ws}, nil)
	if err != nil {
		return
	}
	ss.Wait()
}

// wsBackend is backend for an MCP session over a WebSocket, which
// outlives any one request: each call authenticates the key again, and
// runs as its caller now (act_for as it is now); a key that no longer
// works hangs up.
type wsBackend struct {
	backend
	token  string
	hangUp func()
}

func (b wsBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := b.CallValue(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return rpc.Marshal(res)
}

// CallValue is Call's result before it is encoded (mcp.ValueBackend).
func (b wsBackend) CallValue(ctx context.Context, method string, params any) (any, error) {
	caller, ok := b.srv.Caller(ctx, b.token)
	if !ok || caller.Client != b.caller.Client {
		b.hangUp()
		return nil, kindError{rpc.FromError(errs.New(errs.Forbidden, "", "This agent's key was removed or changed, so Corral no longer takes its calls."))}
	}
	b.caller = caller
	return b.backend.CallValue(ctx, method, params)
}
