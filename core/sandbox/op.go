package sandbox

import (
	"context"
	"time"

	"corral/core/audit"
	"corral/core/fsbox"
	"corral/core/paths"
	"corral/core/policy"
)

// Op is the operation skeleton the packages built on the sandbox use
// (core/links): begin → target → op → end, written once here, as each
// os.Root method is one line over a shared function. Begin selects the
// scope and refuses what the caller may not do (paused, its trust
// level), recording the refusal; Target resolves a path, decides the
// access and opens its folder; End records the operation's one audit
// event and returns the error to answer with. Fields of the event the
// operation adds (its detail, its bytes) are set through Event.
type Op struct{ o *op }

// Begin starts the operation name for caller c in the scope cx selects;
// a refusal is already recorded when it returns an error.
func (s *Sandbox) Begin(ctx context.Context, c Caller, cx *Context, name string) (*Op, error) {
	o, err := s.begin(ctx, c, cx, name, "")
	if err != nil {
		return nil, err
	}
	return &Op{o}, nil
}

// Started starts an operation no agent's call began — the owner's own
// (a key rotation) or a link's visitor — with ev as its event so far,
// in scope: nothing is checked, and End records it.
func (s *Sandbox) Started(ctx context.Context, ev audit.Event, scope string) *Op {
	return &Op{&op{s: s, ctx: ctx, start: s.now(), ev: ev, scope: scope}}
}

// Event is the operation's event, to add to before End.
func (o *Op) Event() *audit.Event { return &o.o.ev }

// Scope is the scope the operation acts in.
func (o *Op) Scope() string { return o.o.scope }

// Target resolves p in the operation's scope, decides access a (asking
// the policy or the owner across the fence) and opens the folder the
// operation runs in.
func (o *Op) Target(p string, a policy.Access) (fsbox.Dir, paths.Target, error) {
	return o.o.target(p, a)
}

// End records the operation's event and returns err, or an io error when
// the event could not be recorded: no answer goes out unaudited.
func (o *Op) End(err error) error { return o.o.end(o.o.ctx, err) }

// Dir opens the folder of t, a target resolved in a scope or the shared
// folder, without deciding anything: for a caller that has checked t
// itself (a signed link).
func (s *Sandbox) Dir(t paths.Target) (fsbox.Dir, error) {
	r, err := s.root(t)
	if err != nil {
		return fsbox.Dir{}, err
	}
	return fsbox.Dir{Root: r, Prefix: t.Prefix}, nil
}

// Now is the sandbox's clock.
func (s *Sandbox) Now() time.Time { return s.now() }
