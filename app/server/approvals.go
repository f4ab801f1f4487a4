package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"corral/app/config"
	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/errs"
	"corral/core/policy"
)

// parseExpiresIn reads an expires_in parameter: a number of seconds or a
// duration string ("1h", "7d"). Absent: 0.
func parseExpiresIn(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	bad := errs.New(errs.InvalidParams, "", `expires_in must be a number of seconds or a duration such as "1h" or "7d".`)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		d, err := config.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, bad
		}
		return d, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n <= 0 || n > int64(100*365*24*time.Hour/time.Second) {
		return 0, bad
	}
	return time.Duration(n) * time.Second, nil
}

// approvalQueue is what the approval methods use of the policy (a
// *policy.Policy): the questions waiting for the owner, the answers, the
// standing rules and the global pause; narrow so their logic is tested
// against a map-backed fake.
type approvalQueue interface {
	Pending() []policy.Approval
	Respond(ctx context.Context, ans policy.Answer) error
	Subscribe(s policy.Surface) (cancel func())
	Rules() []policy.Rule
	Revoke(ctx context.Context, id, by string) error
	SetPaused(ctx context.Context, paused bool, by string) error
}

// approvalArea answers approval.*, rule.* and agents.pause/resume.
type approvalArea struct {
	// queue is the policy now, nil when approvals are off.
	queue   func() approvalQueue
	onPause func(paused bool) // the tray's news of a global pause; may be nil
}

func (s *Server) approvalArea() approvalArea {
	return approvalArea{
		queue: func() approvalQueue {
			if p := s.box.Policy(); p != nil {
				return p
			}
			return nil
		},
		onPause: s.onPause,
	}
}

func (ap approvalArea) methods(add func(name string, m method)) {
	add("approval.list", method{owner: true, fn: ap.list})
	add("approval.respond", method{owner: true, fn: ap.respond})
	add("approval.subscribe", method{owner: true, needsConn: true, fn: ap.subscribe})
	add("rule.list", method{owner: true, fn: ap.ruleList})
	add("rule.revoke", method{owner: true, fn: ap.ruleRevoke})
	add("agents.pause", method{owner: true, fn: ap.setPaused(true)})
	add("agents.resume", method{owner: true, fn: ap.setPaused(false)})
}

// policy returns the queue, or why there is none.
func (ap approvalArea) policy() (approvalQueue, error) {
	if q := ap.queue(); q != nil {
		return q, nil
	}
	return nil, errs.New(errs.Unavailable, "", "Approvals are not enabled in this Corral.")
}

func (ap approvalArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	pending := p.Pending()
	out := make([]approvalOut, len(pending))
	for i, a := range pending {
		out[i] = withChoices(a)
	}
	return pendingResult{Pending: out}, nil
}

func (ap approvalArea) respond(ctx context.Context, c *call) (any, error) {
	var a wire.RespondArgs
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	exp, err := parseExpiresIn(a.ExpiresIn)
	if err != nil {
		return nil, err
	}
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	err = p.Respond(ctx, policy.Answer{ID: a.ID, Decision: policy.Decision(a.Decision), Widen: a.Widen, ExpiresIn: exp,
		By: c.caller.Client, Via: answeredVia(c), Reason: a.Reason})
	if err != nil {
		return nil, err
	}
	return decidedResult{ID: a.ID, Decision: a.Decision}, nil
}

// answeredVia names, for the audit log, which of the owner's surfaces an
// answer came from (audit.Event.AnsweredBy): a paired device by its name,
// a dashboard tab by its browser, the owner's key as the command line.
func answeredVia(c *call) string {
	switch {
	case c.conn != nil && c.conn.deviceID != "":
		return c.caller.Client // "device:<name>"
	case c.caller.Client == browserCaller.Client && c.conn != nil:
		return "dashboard:" + c.conn.browser
	case c.caller.Client == ownerCaller.Client:
		return "cli"
	}
	return c.caller.Client
}

// browserName is the browser a User-Agent names, one of a few fixed words
// (nothing of the header itself is kept).
func browserName(ua string) string {
	for _, b := range []struct{ mark, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chromium/", "Chromium"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, b.mark) {
			return b.name
		}
	}
	return "a browser"
}

// connSurface forwards the broker's news to one connection, in order,
// without ever blocking the broker: a connection that cannot keep up is
// dropped.
type connSurface struct {
	conn *conn
	ch   chan []byte
}

func (cs *connSurface) send(method string, params any) {
	b, err := rpc.Notify(method, params)
	if err != nil {
		return
	}
	select {
	case cs.ch <- b:
	default:
		cs.conn.s.log.Warn("dropping connection that does not read its approvals", "client", cs.conn.caller.Client)
		cs.conn.finish()
	}
}

func (cs *connSurface) ApprovalRequested(a policy.Approval) {
	cs.send("approval.requested", approvalRequested{Approval: withChoices(a)})
}

// approvalOut is an approval as the owner's surfaces receive it
// (declared in app/wire, which `corral approve` reads too).
type approvalOut = wire.PendingApproval

func withChoices(a policy.Approval) approvalOut {
	out := approvalOut{Approval: wire.To[wire.Approval](a), Choices: wire.To[[]wire.Choice](a.Choices()), DefaultDecision: a.Default()}
	if a.Level != "" {
		out.LevelLabel = a.Level.Label()
	}
	return out
}

func (cs *connSurface) ApprovalResolved(id string, d policy.Decision, by string) {
	cs.send("approval.resolved", approvalResolved{ID: id, Decision: d, By: by})
}

func (ap approvalArea) subscribe(ctx context.Context, c *call) (any, error) {
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	if !c.conn.subscribeOnce("approvals") {
		return subscribedResult{Subscribed: true}, nil
	}
	// Subscribe replays what is pending into the buffer before the
	// forwarder starts; the buffer is larger than all the questions that
	// can be pending at once for a few dozen clients, so the replay cannot
	// overflow it.
	cs := &connSurface{conn: c.conn, ch: make(chan []byte, 4096)}
	cancel := p.Subscribe(cs)
	go func() {
		defer c.conn.unsubscribe("approvals")
		defer cancel()
		for {
			select {
			case b := <-cs.ch:
				if !c.conn.push(b) {
					return
				}
			case <-c.conn.done:
				return
			}
		}
	}()
	return subscribedResult{Subscribed: true}, nil
}

func (ap approvalArea) ruleList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	return rulesResult{Rules: wire.To[[]wire.Rule](p.Rules())}, nil
}

func (ap approvalArea) ruleRevoke(ctx context.Context, c *call) (any, error) {
	var a struct {
		ID string `json:"id" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	if err := p.Revoke(ctx, a.ID, c.caller.Client); err != nil {
		return nil, err
	}
	return idResult{ID: a.ID}, nil
}

func (ap approvalArea) setPaused(paused bool) func(context.Context, *call) (any, error) {
	return func(ctx context.Context, c *call) (any, error) {
		if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
			return nil, err
		}
		p, err := ap.policy()
		if err != nil {
			return nil, err
		}
		if err := p.SetPaused(ctx, paused, c.caller.Client); err != nil {
			return nil, err
		}
		if ap.onPause != nil {
			ap.onPause(paused)
		}
		return pausedResult{Paused: paused}, nil
	}
}
