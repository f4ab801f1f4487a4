package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/client"
	"corral/app/mcp"
)

// wsBackend forwards MCP tool calls to the daemon over its WebSocket, so
// the daemon's approvals, audit and tray see them.
type wsBackend struct{ c *client.Client }

func (b wsBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return b.c.Call(ctx, method, params)
}

func runMCP(args []string) error {
	if len(args) != 0 {
		return errors.New("usage: corral mcp (configure with CORRAL_URL and CORRAL_KEY)")
	}
	tuneGC()
	return withDaemon(serveMCP)
}

// serveMCP serves MCP over stdio, forwarding to c, until ctx ends or the
// connection to the daemon closes.
func serveMCP(ctx context.Context, c *client.Client) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the daemon went away: stop serving tools that cannot work
		select {
		case <-c.Done():
			fmt.Fprintln(os.Stderr, "corral mcp: the connection to Corral closed")
			cancel()
		case <-ctx.Done():
		}
	}()
	err := mcp.NewServer(wsBackend{c}, version).Run(ctx, &sdk.StdioTransport{})
	if ctx.Err() != nil {
		return nil
	}
	return err
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
