package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/sandbox"
)

// invokeSeq names commands started outside a connection (MCP over HTTP).
var invokeSeq atomic.Int64

// requestID is the canonical text of a JSON-RPC id, used to find a
// command again for command.cancel.
func requestID(id json.RawMessage) string {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil {
		return "local-" + strconv.FormatInt(invokeSeq.Add(1), 10)
	}
	s := b.String()
	if uq, err := strconv.Unquote(s); err == nil && len(s) > 0 && s[0] == '"' {
		return uq
	}
	return s
}

func (s *Server) commandRun(ctx context.Context, c *call) (any, error) {
	a, err := wire.Decode[sandbox.RunArgs](c.params)
	if err != nil {
		return nil, err
	}
	id := requestID(c.id)
	var onOutput func(string, []byte)
	switch {
	case a.Stream && c.conn != nil:
		onOutput = func(stream string, data []byte) {
			c.conn.notify("command.output", commandOutput{RequestID: json.RawMessage(c.id), Stream: stream, Data: string(data)})
		}
	case a.Stream:
		onOutput = c.output
	}
	r, err := s.box.Run(ctx, c.caller, a, id, onOutput)
	if err != nil {
		return nil, err
	}
	return wire.Encode(r), nil
}

func (s *Server) commandCancel(ctx context.Context, c *call) (any, error) {
	var a struct {
		RequestID json.RawMessage `json:"request_id" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	id := requestID(a.RequestID)
	cancelled := s.box.CancelCommand(c.caller, id)
	detail := "nothing was running under that id"
	if cancelled {
		detail = "stopped"
	}
	if err := s.record(ctx, c.caller.Client, "command.cancel", id, detail); err != nil {
		return nil, err
	}
	return cancelledResult{Cancelled: cancelled}, nil
}

func (s *Server) commandList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	return runningResult{Running: wire.To[[]wire.Running](s.box.Commands())}, nil
}
