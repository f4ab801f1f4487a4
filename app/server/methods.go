package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/audit"
	"corral/core/errs"
	"corral/core/sandbox"
)

// call is one JSON-RPC call in progress.
type call struct {
	conn   *conn
	caller sandbox.Caller
	id     json.RawMessage
	params json.RawMessage
	// args are the params already decoded, as the wire type the method
	// declares (app/wire), when the caller has them so (MCP: its tools'
	// arguments are those types): params then is nil and nothing is
	// encoded or decoded again on the way to the method (see decode).
	args   any
	took   bool                             // the method took args (decode): see run
	output func(stream string, data []byte) // outside a connection: command.run's stream
}

// decode is c's params as A, the method's params type: c.args converted
// when MCP handed them over decoded, otherwise the JSON decoded with
// rpc.DecodeParams' checks (app/wire).
func decode[A any](c *call) (A, error) {
	if c.args != nil {
		c.took = true
		return wire.From[A](c.args)
	}
	return wire.Decode[A](c.params)
}

type method struct {
	owner     bool // owner-only: clients get forbidden
	needsConn bool // streams notifications to a connection
	fn        func(ctx context.Context, c *call) (any, error)
}

// run calls the method name for c.caller, after the checks every transport
// shares: the method exists (and has the connection it needs), the caller
// may call it, and a paired device only what deviceMethods allows. A panic
// in the method is logged and answered as io.
func (s *Server) run(ctx context.Context, name string, c *call) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic in method", "method", name, "client", c.caller.Client, "err", fmt.Sprint(v), "stack", string(debug.Stack()))
			result, err = nil, errs.Wrap(fmt.Errorf("panic: %v", v), errs.IO, "", "Something went wrong inside Corral; the call did not complete.")
		}
	}()
	if !c.caller.Owner {
		// An agent's settings as they are now: the owner may have paused,
		// changed or removed it since its connection opened.
		cur, ok := s.dir.Current(c.caller.Client)
		if !ok {
			return nil, errs.New(errs.Forbidden, "", "The owner has removed this agent (%s); its key no longer works.", c.caller.Client)
		}
		c.caller = cur
		// One agent's calls are taken at a bounded rate (limiter.go),
		// whatever the transport, before anything is done or recorded.
		if err := s.calls.take(ctx, cur.Client); err != nil {
			return nil, err
		}
	}
	m, ok := s.methods[name]
	if !ok || (m.needsConn && c.conn == nil) {
		return nil, rpc.MethodNotFound(name)
	}
	if m.owner && !c.caller.Owner {
		return nil, errs.New(errs.Forbidden, "", "Only the owner may call %s.", name)
	}
	if c.conn != nil && c.conn.deviceID != "" && !deviceMethods[name] {
		return nil, errs.New(errs.Forbidden, "", "A paired device may not call %s; use the computer Corral runs on.", name)
	}
	result, err = m.fn(ctx, c)
	if c.args != nil && !c.took {
		// A method that reads c.params only saw none: a mistake in
		// Corral (its row should decode), never the agent's.
		s.log.Error("method ignored the params MCP handed it decoded", "method", name)
		return nil, errs.New(errs.IO, "", "Corral could not hand this call's arguments to %s; the call did not complete.", name)
	}
	return result, err
}

// handle adapts a typed facade method to the method table: its params
// and result take their JSON form in app/wire, and params MCP hands over
// decoded reach it without JSON (decode).
func handle[A, R any](f func(context.Context, sandbox.Caller, A) (R, error)) func(context.Context, *call) (any, error) {
	return func(ctx context.Context, c *call) (any, error) {
		a, err := decode[A](c)
		if err != nil {
			return nil, err
		}
		r, err := f(ctx, c.caller, a)
		if err != nil {
			return nil, err
		}
		return wire.Encode(r), nil
	}
}

func (s *Server) methodTable() map[string]method {
	t := map[string]method{}
	// Each area depends only on what it uses (a narrow interface each).
	add := func(name string, m method) { t[name] = m }
	s.approvalArea().methods(add)
	s.deviceArea().methods(add)
	auditArea{log: s.audit}.methods(add)
	fileArea{box: s.box, patches: s.patches, docs: s.docs, undo: s.undo}.methods(add)
	s.sessionArea().methods(add)
	commandArea{box: s.cmds, record: s.record}.methods(add)
	s.linkArea().methods(add)
	agentArea{s.dir}.methods(add)
	s.connectArea().methods(add)
	configArea{status: s.ConfigStatus}.methods(add)
	summaryArea{log: s.audit}.methods(add)
	s.settingsArea().methods(add)
	s.ruleArea().methods(add)
	return t
}

// recordFunc writes one line of the audit log (Server.record): what an
// area needs of the log, no more.
type recordFunc func(ctx context.Context, who, op, target, detail string) error

// maxOps bounds the operations one audit filter may list (its error says 64).
const maxOps = 64

// auditFilter is the filter of audit.query's and audit.stats' params,
// checked.
func auditFilter(a wire.AuditArgs) (audit.Filter, error) {
	f := audit.Filter{Client: a.Client, Agent: a.Agent, User: a.User, Op: a.Op, Ops: a.Ops, Changed: a.Changed, Asked: a.Asked, HideOwn: a.HideOwn, Decision: audit.Decision(a.Decision), Text: a.Text, ID: a.ID, Cursor: a.Cursor, Limit: a.Limit}
	if a.Ops != nil && (len(a.Ops) == 0 || len(a.Ops) > maxOps) {
		return f, errs.New(errs.InvalidParams, "", "ops must list between 1 and 64 operations.")
	}
	if a.ID < 0 {
		return f, errs.New(errs.InvalidParams, "", "id must be an event number (1 or more).")
	}
	var err error
	if a.Since != "" {
		if f.Since, err = time.Parse(time.RFC3339, a.Since); err != nil {
			return f, errs.New(errs.InvalidParams, "", "since must be an RFC 3339 time such as 2026-01-02T15:04:05Z.")
		}
	}
	if a.Until != "" {
		if f.Until, err = time.Parse(time.RFC3339, a.Until); err != nil {
			return f, errs.New(errs.InvalidParams, "", "until must be an RFC 3339 time such as 2026-01-02T15:04:05Z.")
		}
	}
	switch f.Decision {
	case "", audit.Allow, audit.Deny, audit.Error:
	default:
		return f, errs.New(errs.InvalidParams, "", `decision must be "allow", "deny" or "error".`)
	}
	if a.Limit < 0 {
		return f, errs.New(errs.InvalidParams, "", "limit must not be negative.")
	}
	return f, nil
}

// auditFeed is what the audit methods use of the store: reading and
// following the log; they never write it.
type auditFeed interface {
	audit.Reader
	audit.Subscriber
}

// auditArea answers audit.query, audit.stats and audit.subscribe.
type auditArea struct {
	log auditFeed
}

func (l auditArea) methods(add func(name string, m method)) {
	add("audit.query", method{owner: true, fn: l.query})
	add("audit.stats", method{owner: true, fn: l.stats})
	add("audit.subscribe", method{owner: true, needsConn: true, fn: l.subscribe})
}

func (l auditArea) query(ctx context.Context, c *call) (any, error) {
	var a wire.AuditArgs
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	if a.Bucket != "" {
		return nil, errs.New(errs.InvalidParams, "", "Unknown parameter \"bucket\" (it belongs to audit.stats).")
	}
	f, err := auditFilter(a)
	if err != nil {
		return nil, err
	}
	page, err := l.log.Query(ctx, f)
	if err != nil {
		return nil, err
	}
	if page.Events == nil {
		page.Events = []audit.Event{}
	}
	return wire.Encode(page), nil
}

func (l auditArea) stats(ctx context.Context, c *call) (any, error) {
	var a wire.AuditArgs
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	f, err := auditFilter(a)
	if err != nil {
		return nil, err
	}
	var bucket time.Duration
	switch a.Bucket {
	case "hour", "":
		bucket = time.Hour
	case "day":
		bucket = 24 * time.Hour
	default:
		return nil, errs.New(errs.InvalidParams, "", `bucket must be "hour" or "day".`)
	}
	b, err := l.log.Stats(ctx, f, bucket)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []audit.Bucket{}
	}
	return bucketsResult{Buckets: wire.To[[]wire.Bucket](b)}, nil
}

// subscribe streams committed events to the connection until it ends.
func (l auditArea) subscribe(ctx context.Context, c *call) (any, error) {
	if !c.conn.subscribeOnce("audit") {
		return subscribedResult{Subscribed: true}, nil
	}
	events, cancel := l.log.Subscribe()
	go func() {
		defer c.conn.unsubscribe("audit") // a later audit.subscribe starts afresh
		defer cancel()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					// Fell behind and the store dropped us: end the
					// connection rather than let the feed die silently;
					// clients reconnect and subscribe afresh.
					c.conn.s.log.Warn("closing a connection whose audit feed fell behind", "client", c.caller.Client)
					c.conn.finish()
					return
				}
				if !c.conn.notify("audit.event", wire.AuditEvent{Event: wire.To[wire.Event](ev)}) {
					return
				}
			case <-c.conn.done:
				return
			}
		}
	}()
	return subscribedResult{Subscribed: true}, nil
}
