package server

import (
	"context"
	"strings"

	"corral/app/answers"
	"corral/app/rpc"
	"corral/core/policy"
)

// The owner's answers (approvals, rules, the pause) live in app/answers;
// here are their rows, what they are given of the server, and the
// WebSocket side of approval.subscribe.

type (
	approvalOut       = answers.Question
	pendingResult     = answers.Pending
	decidedResult     = answers.Decided
	rulesResult       = answers.RuleList
	pausedResult      = answers.Paused
	approvalRequested = answers.Requested
	approvalResolved  = answers.Resolved
)

var (
	withChoices    = answers.WithChoices
	parseExpiresIn = answers.ParseExpiresIn
)

// approvalArea answers approval.*, rule.list, rule.revoke and
// agents.pause/resume.
type approvalArea struct{ answers.Approvals }

func (s *Server) approvalArea() approvalArea {
	return approvalArea{answers.Approvals{
		Queue: func() answers.Queue {
			if p := s.box.Policy(); p != nil {
				return p
			}
			return nil
		},
		OnPause: s.onPause,
	}}
}

func (ap approvalArea) methods(add func(name string, m method)) {
	add("approval.list", owned(ap.List))
	add("approval.respond", method{owner: true, fn: ap.respond})
	add("approval.subscribe", method{owner: true, needsConn: true, fn: ap.subscribe})
	add("rule.list", owned(ap.Rules))
	add("rule.revoke", owned(ap.Revoke))
	add("agents.pause", owned(ap.Pause))
	add("agents.resume", owned(ap.Resume))
}

func (ap approvalArea) respond(ctx context.Context, c *call) (any, error) {
	var a answers.Answer
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	r, err := ap.Respond(ctx, c.caller.Client, answeredVia(c), a)
	if err != nil {
		return nil, err
	}
	return r, nil
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

func (ap approvalArea) subscribe(ctx context.Context, c *call) (any, error) {
	// Subscribe replays what is pending into the buffer before the
	// forwarder starts; the buffer is larger than all the questions that
	// can be pending at once for a few dozen clients, so the replay cannot
	// overflow it.
	cs := &connSurface{conn: c.conn}
	cancel, err := ap.Subscribe(func() bool { return c.conn.subscribeOnce("approvals") }, func() policy.Surface {
		cs.ch = make(chan []byte, 4096)
		return answers.Notifier{Send: cs.send}
	})
	if err != nil {
		return nil, err
	}
	if cancel == nil {
		return subscribedResult{Subscribed: true}, nil
	}
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

// ruleArea answers the hand-written rule methods.
type ruleArea struct{ answers.Rulebook }

func (s *Server) ruleArea() ruleArea {
	return ruleArea{answers.Rulebook{Dir: s.dir, Record: s.record, Now: s.now, Book: func() answers.Book {
		if p := s.box.Policy(); p != nil {
			return p
		}
		return nil
	}}}
}

func (x ruleArea) methods(add func(name string, m method)) {
	add("rule.preview", owned(x.Preview))
	add("rule.add", owned(x.Add))
	add("rule.update", owned(x.Update))
	add("rule.export", owned(x.Export))
	add("rule.import", owned(x.Import))
}
