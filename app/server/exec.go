package server

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/commands"
	"corral/core/sandbox"
)

// invokeSeq names commands started outside a connection (MCP over HTTP).
var invokeSeq atomic.Int64

// requestID is the canonical text of a JSON-RPC id, used to find a
// command again for command.cancel.
func requestID(id json.RawMessage) string {
	if s, ok := rpc.IDText(id); ok {
		return s
	}
	return "local-" + strconv.FormatInt(invokeSeq.Add(1), 10)
}

// commandRunner is what the command methods use of core/commands:
// running, stopping and listing commands.
type commandRunner interface {
	Run(ctx context.Context, c sandbox.Caller, a commands.RunArgs, requestID string, onOutput func(stream string, data []byte)) (commands.RunResult, error)
	CancelCommand(c sandbox.Caller, requestID string) bool
	Commands() []commands.Running
}

// commandArea answers command.run, command.cancel and command.list.
type commandArea struct {
	box    commandRunner
	record recordFunc
}

func (x commandArea) methods(add func(name string, m method)) {
	add("command.run", method{fn: x.run})
	add("command.cancel", method{fn: x.cancel})
	add("command.list", method{owner: true, fn: x.list})
}

func (x commandArea) run(ctx context.Context, c *call) (any, error) {
	a, err := decode[commands.RunArgs](c)
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
	r, err := x.box.Run(ctx, c.caller, a, id, onOutput)
	if err != nil {
		return nil, err
	}
	return wire.Encode(r), nil
}

func (x commandArea) cancel(ctx context.Context, c *call) (any, error) {
	var a struct {
		RequestID json.RawMessage `json:"request_id" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	id := requestID(a.RequestID)
	cancelled := x.box.CancelCommand(c.caller, id)
	detail := "nothing was running under that id"
	if cancelled {
		detail = "stopped"
	}
	if err := x.record(ctx, c.caller.Client, "command.cancel", id, detail); err != nil {
		return nil, err
	}
	return cancelledResult{Cancelled: cancelled}, nil
}

func (x commandArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	return runningResult{Running: wire.To[[]wire.Running](x.box.Commands())}, nil
}
