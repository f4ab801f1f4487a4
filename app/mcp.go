package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/client"
	"corral/app/mcp"
	"corral/app/wire"
)

// wsBackend forwards MCP tool calls to the daemon over its WebSocket, so
// the daemon's approvals, audit and tray see them. When the daemon
// restarts, the next call dials it again; a call that was under way when
// the connection broke fails (it may or may not have completed there) and
// is not repeated.
type wsBackend struct {
	dial   func(ctx context.Context) (*client.Client, error)
	mu     sync.Mutex
	c      *client.Client
	closed bool // after close: no new connection
}

// client returns the open connection, dialling a new one if the last has
// closed.
func (b *wsBackend) client(ctx context.Context) (*client.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("corral mcp is shutting down")
	}
	if b.c != nil {
		select {
		case <-b.c.Done():
			b.c.Close()
			b.c = nil
		default:
			return b.c, nil
		}
	}
	c, err := b.dial(ctx)
	if err != nil {
		return nil, err
	}
	b.c = c
	return c, nil
}

func (b *wsBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, fmt.Errorf("Corral cannot be reached, so the call was not made: %w", err)
	}
	var onNote func(client.Notification)
	if report := mcp.Progress(ctx); report != nil {
		onNote = func(n client.Notification) {
			var p struct{ Message, Data string }
			json.Unmarshal(n.Params, &p)
			switch {
			case n.Method == "request.progress":
				report(p.Message)
			case n.Method == "command.output" && p.Data != "":
				report(strings.TrimSuffix(p.Data, "\n"))
			}
		}
	}
	raw, err := c.CallNotify(ctx, method, params, onNote)
	if err != nil && ctx.Err() == nil {
		select {
		case <-c.Done():
			return nil, errors.New("The connection to Corral broke before it answered (was it restarted?); the call may or may not have completed. Check before repeating it.")
		default:
		}
	}
	return raw, err
}

// close closes the connection in use, if any: the daemon cancels what is
// still running for it.
func (b *wsBackend) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// errMCPNoKey is what `corral mcp` says when started without an agent's
// key: an MCP client configured without CORRAL_KEY would otherwise act
// as the owner (every scope, every tool), which nobody meant by accident.
var errMCPNoKey = errors.New("corral mcp needs an agent's key and CORRAL_KEY is not set, so it did not start. " +
	"To connect an agent app, open the dashboard's Agents page and choose Connect an app, " +
	"or set CORRAL_KEY=<the agent's key> (and CORRAL_URL) in the app's MCP settings. " +
	"To act as the owner with every scope and tool, run corral mcp --owner")

func runMCP(args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	owner := fs.Bool("owner", false, "act as the owner (owner.token), not as an agent; CORRAL_KEY must be unset")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("usage: corral mcp [--owner] (configure with CORRAL_URL and CORRAL_KEY)")
	}
	switch key := os.Getenv("CORRAL_KEY"); {
	case key == "" && !*owner:
		return errMCPNoKey
	case key != "" && *owner:
		return errors.New("corral mcp --owner acts with the owner's token, but CORRAL_KEY is set too; unset CORRAL_KEY, or leave out --owner to act as that key's agent")
	}
	tuneGC()
	return withDaemon(serveMCP)
}

// serveMCP serves MCP over stdio, forwarding to c (and to a new
// connection when the daemon restarts), until ctx ends (SIGINT, SIGTERM)
// or stdin closes. Either way the calls still running are cancelled: the
// MCP server cancels their contexts, which tells the daemon, and closing
// the connection cancels whatever is left there.
func serveMCP(ctx context.Context, c *client.Client) error {
	if base, key, err := daemonTarget(); err == nil {
		ws, err := dialMCP(ctx, base, key)
		if err == nil {
			c.Close() // the relay needs only its own connection
			r := &relay{out: os.Stdout, maxLine: mcp.DefaultMaxLine, ws: ws, pending: map[string]string{},
				dial: func(ctx context.Context) (*websocket.Conn, error) { return dialMCP(ctx, base, key) }}
			go r.read(ws)
			// A read of stdin does not end when ctx does: a signal
			// hangs up (the daemon cancels what is running) and returns.
			done := make(chan error, 1)
			go func() { done <- r.run(ctx, os.Stdin) }()
			select {
			case err := <-done:
				return err
			case <-ctx.Done():
				r.hangUp()
				return nil
			}
		}
		if !errors.Is(err, errNoMCPWebSocket) {
			return fmt.Errorf("Corral at %s: %w", base, err)
		}
	}
	return serveMCPAdapter(ctx, c)
}

// serveMCPAdapter serves MCP in this process, calling the daemon's
// methods over /ws: for a daemon that does not serve MCP over a
// WebSocket itself.
func serveMCPAdapter(ctx context.Context, c *client.Client) error {
	b := &wsBackend{c: c, dial: dial}
	defer b.close()
	// The SDK waits for running handlers before Run returns; closing the
	// connection first ends their calls at once (and the daemon cancels
	// them), so a signal ends `corral mcp` promptly.
	stop := context.AfterFunc(ctx, b.close)
	defer stop()
	err := mcp.NewServer(b, version, toolOptions(ctx, c)).Run(ctx, &mcp.LineTransport{In: os.Stdin, Out: os.Stdout})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// toolOptions shapes the tool list for the key `corral mcp` runs with:
// session.info says whether it may act for others, and the owner's
// command timeout. When the daemon does not answer, the tools offer
// context (a client that may not use it is refused by the daemon as
// always) and state the default timeout.
func toolOptions(ctx context.Context, c *client.Client) mcp.Options {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, "session.info", nil)
	var info wire.SessionInfo
	if err != nil || json.Unmarshal(raw, &info) != nil {
		return mcp.Options{ActsForOthers: true}
	}
	return mcp.Options{ActsForOthers: info.Role == "owner" || len(info.ActFor) > 0, CommandTimeout: time.Duration(info.Exec.TimeoutMs) * time.Millisecond}
}

// tuneGC lets `corral mcp` collect garbage less often than Go's default
// unless GOGC says otherwise. The adapter keeps almost nothing alive, yet
// the MCP SDK allocates several copies of every message; at the default a
// collection runs every few calls. Measured with BenchmarkMCPNodeFileRead.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// daemonMemoryLimit is the daemon's soft heap limit with tuneDaemonGC
// (unless GOMEMLIMIT says otherwise): past it Go collects as often as it
// must, whatever GOGC says.
const daemonMemoryLimit = 1 << 30

// tuneDaemonGC does for the daemon what tuneGC does for `corral mcp`:
// since `corral mcp` relays bytes (issue 28), the daemon builds every MCP
// answer, and at Go's default a collection ran every few calls. GOGC 400
// unless GOGC is set, with a soft limit of 1 GiB so the larger target
// never lets the heap grow past that (an idle daemon keeps a few MiB
// alive, so its heap stays small). Measured with BenchmarkMCPNodeFileRead
// (docs/benchmarks.md).
func tuneDaemonGC() {
	tuneGC()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(daemonMemoryLimit)
	}
}
