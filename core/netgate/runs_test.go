package netgate

import (
	"context"
	"sync"
	"testing"
	"time"

	"corral/core/policy"
)

// noRules is a RuleStore that keeps nothing.
type noRules struct{}

func (noRules) SaveRule(context.Context, policy.Rule) error      { return nil }
func (noRules) DeleteRule(context.Context, string) (bool, error) { return false, nil }
func (noRules) LoadRules(context.Context) ([]policy.Rule, error) { return nil, nil }

// askedSurface hands every question to the test.
type askedSurface struct{ asked chan policy.Approval }

func (s askedSurface) ApprovalRequested(a policy.Approval)              { s.asked <- a }
func (s askedSurface) ApprovalResolved(string, policy.Decision, string) {}

// TestAllowOnceCoversOnlyItsRun (issue 25): a second command started
// while the first one's question about a domain waits must not ride on
// the owner's "allow once", which was shown with the first command only:
// it is asked itself, with its own command.
func TestAllowOnceCoversOnlyItsRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := newFixture(t, nil)
	pol, err := policy.New(ctx, policy.Config{Rules: noRules{}, Audit: f.log, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s := askedSurface{asked: make(chan policy.Approval, 8)}
	defer pol.Subscribe(s)()
	f.gate.cfg.Policy = pol

	first, second := pipCommand(t), pipCommand(t)
	second.Command, second.RequestID = "pip install evil", "8"
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	dial := func(ctx context.Context, c Command) chan error {
		done := make(chan error, 1)
		wg.Go(func() {
			conn, err := f.gate.Open(c).Dial(ctx, "pypi.org", 443)
			if err == nil {
				conn.Close()
			}
			done <- err
		})
		return done
	}
	deadline := time.After(60 * time.Second) // generous: each step is at once
	firstDone := dial(ctx, first)
	var q1 policy.Approval
	select {
	case q1 = <-s.asked:
	case <-deadline:
		t.Fatal("the first command was not asked")
	}
	// The second connection tells which question it waits on.
	waits := make(chan policy.Approval, 1)
	secondDone := dial(policy.WithWaiting(ctx, func(a policy.Approval) { waits <- a }), second)
	var q2 policy.Approval
	select {
	case q2 = <-waits:
	case <-deadline:
		t.Fatal("the second command did not wait for an answer")
	}
	if q2.ID == q1.ID {
		t.Fatalf("the second command waits on the first one's question, which shows only %q", q1.Command)
	}
	if a := <-s.asked; a.ID != q2.ID || q2.Command != second.Command || q1.Command != first.Command {
		t.Fatalf("questions %q (%s) and %q (%s), asked %s", q1.Command, q1.ID, q2.Command, q2.ID, a.ID)
	}
	if err := pol.Respond(ctx, policy.Answer{ID: q1.ID, Decision: policy.AllowOnce, By: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("the first command, allowed once: %v", err)
	}
	if err := pol.Respond(ctx, policy.Answer{ID: q2.ID, Decision: policy.DenyOnce, By: "owner"}); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, <-secondDone, "the owner denied it")
}
