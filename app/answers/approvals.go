package answers

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"corral/app/config"
	"corral/app/wire"
	"corral/core/errs"
	"corral/core/policy"
)

// ParseExpiresIn reads an expires_in parameter: a number of seconds or a
// duration string ("1h", "7d"). Absent: 0.
func ParseExpiresIn(raw json.RawMessage) (time.Duration, error) {
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

// Queue is what the approval methods use of the policy (a
// *policy.Policy): the questions waiting for the owner, the answers, the
// standing rules and the global pause; narrow so their logic is tested
// against a map-backed fake.
type Queue interface {
	Pending() []policy.Approval
	Respond(ctx context.Context, ans policy.Answer) error
	Subscribe(s policy.Surface) (cancel func())
	Rules() []policy.Rule
	Revoke(ctx context.Context, id, by string) error
	SetPaused(ctx context.Context, paused bool, by string) error
}

// Approvals answers approval.list, approval.respond, approval.subscribe,
// rule.list, rule.revoke and agents.pause/resume.
type Approvals struct {
	// Queue is the policy now, nil when approvals are off.
	Queue   func() Queue
	OnPause func(paused bool) // the tray's news of a global pause; may be nil
}

// policy returns the queue, or why there is none.
func (ap Approvals) policy() (Queue, error) {
	if q := ap.Queue(); q != nil {
		return q, nil
	}
	return nil, errs.New(errs.Unavailable, "", "Approvals are not enabled in this Corral.")
}

// Pending answers approval.list (declared in app/wire, which the CLI
// reads).
type Pending = wire.Pending

// List is approval.list: the questions waiting, with their choices.
func (ap Approvals) List(ctx context.Context, by string, _ struct{}) (Pending, error) {
	p, err := ap.policy()
	if err != nil {
		return Pending{}, err
	}
	pending := p.Pending()
	out := make([]Question, len(pending))
	for i, a := range pending {
		out[i] = WithChoices(a)
	}
	return Pending{Pending: out}, nil
}

// Answer is approval.respond's params (declared in app/wire, which
// `corral approve` sends).
type Answer = wire.RespondArgs

// Decided answers approval.respond.
type Decided struct {
	Decision string `json:"decision"`
	ID       string `json:"id"`
}

// Respond is approval.respond: the owner's answer a, given by by through
// the surface via (audit.Event.AnsweredBy), passed to the policy.
func (ap Approvals) Respond(ctx context.Context, by, via string, a Answer) (Decided, error) {
	exp, err := ParseExpiresIn(a.ExpiresIn)
	if err != nil {
		return Decided{}, err
	}
	p, err := ap.policy()
	if err != nil {
		return Decided{}, err
	}
	err = p.Respond(ctx, policy.Answer{ID: a.ID, Decision: policy.Decision(a.Decision), Widen: a.Widen, ExpiresIn: exp,
		By: by, Via: via, Reason: a.Reason})
	if err != nil {
		return Decided{}, err
	}
	return Decided{ID: a.ID, Decision: a.Decision}, nil
}

// Subscribe is approval.subscribe's start: unless approvals are off or
// first says the caller is subscribed already (cancel is then nil), the
// surface made by surface hears of every question waiting now and of
// those to come, until cancel.
func (ap Approvals) Subscribe(first func() bool, surface func() policy.Surface) (cancel func(), err error) {
	p, err := ap.policy()
	if err != nil {
		return nil, err
	}
	if !first() {
		return nil, nil
	}
	return p.Subscribe(surface()), nil
}

// Question is an approval as the owner's surfaces receive it: with the
// answers it accepts, in the words of policy's one table, and the one to
// put first (Deny for secrets), so no surface keeps its own copy
// (declared in app/wire, which `corral approve` reads too).
type Question = wire.PendingApproval

// WithChoices is a as the owner's surfaces receive it.
func WithChoices(a policy.Approval) Question {
	out := Question{Approval: wire.To[wire.Approval](a), Choices: wire.To[[]wire.Choice](a.Choices()), DefaultDecision: a.Default()}
	if a.Level != "" {
		out.LevelLabel = a.Level.Label()
	}
	return out
}

// Requested is approval.requested's params.
type Requested struct {
	Approval Question `json:"approval"`
}

// Resolved is approval.resolved's params: by is the surface that
// answered.
type Resolved struct {
	By       string          `json:"by"`
	Decision policy.Decision `json:"decision"`
	ID       string          `json:"id"`
}

// Notifier is a policy.Surface that hands the broker's news on as
// approval.requested and approval.resolved notifications to Send, which
// must not block.
type Notifier struct {
	Send func(method string, params any)
}

func (n Notifier) ApprovalRequested(a policy.Approval) {
	n.Send("approval.requested", Requested{Approval: WithChoices(a)})
}

func (n Notifier) ApprovalResolved(id string, d policy.Decision, by string) {
	n.Send("approval.resolved", Resolved{ID: id, Decision: d, By: by})
}

// RuleList answers rule.list.
type RuleList struct {
	Rules []wire.Rule `json:"rules"`
}

// Rules is rule.list: the standing rules.
func (ap Approvals) Rules(ctx context.Context, by string, _ struct{}) (RuleList, error) {
	p, err := ap.policy()
	if err != nil {
		return RuleList{}, err
	}
	return RuleList{Rules: wire.To[[]wire.Rule](p.Rules())}, nil
}

// IDParams name a rule.
type IDParams struct {
	ID string `json:"id" rpc:"required"`
}

// Revoked answers rule.revoke.
type Revoked struct {
	ID string `json:"id"`
}

// Revoke is rule.revoke: the rule p names withdrawn by by.
func (ap Approvals) Revoke(ctx context.Context, by string, a IDParams) (Revoked, error) {
	p, err := ap.policy()
	if err != nil {
		return Revoked{}, err
	}
	if err := p.Revoke(ctx, a.ID, by); err != nil {
		return Revoked{}, err
	}
	return Revoked{ID: a.ID}, nil
}

// Paused answers agents.pause and agents.resume.
type Paused struct {
	Paused bool `json:"paused"`
}

// Pause is agents.pause: every agent's calls wait until Resume.
func (ap Approvals) Pause(ctx context.Context, by string, _ struct{}) (Paused, error) {
	return ap.setPaused(ctx, by, true)
}

// Resume is agents.resume.
func (ap Approvals) Resume(ctx context.Context, by string, _ struct{}) (Paused, error) {
	return ap.setPaused(ctx, by, false)
}

func (ap Approvals) setPaused(ctx context.Context, by string, paused bool) (Paused, error) {
	p, err := ap.policy()
	if err != nil {
		return Paused{}, err
	}
	if err := p.SetPaused(ctx, paused, by); err != nil {
		return Paused{}, err
	}
	if ap.OnPause != nil {
		ap.OnPause(paused)
	}
	return Paused{Paused: paused}, nil
}
