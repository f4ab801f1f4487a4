package netgate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/core/audit"
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
// while the first one's question about its domains waits must not ride on
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
	// Each command is asked before it runs, then connects.
	dial := func(ctx context.Context, c Command) chan error {
		done := make(chan error, 1)
		wg.Go(func() {
			run := f.gate.Open(c)
			if _, err := run.Ask(ctx); err != nil {
				done <- err
				return
			}
			conn, err := run.Dial(ctx, "pypi.org", 443)
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

// TestRefusalsRecordedAtABoundedRate (red team): a command looping on
// refused connections (a domain outside its list) wrote one event per
// attempt, 43,847 events (15 MB of database, 148 MB of WAL) in 20 s from
// one command. Now an agent's refusals are recorded one by one up to
// its bucket, the rest counted in one event when the run closes; another
// agent's bucket is its own.
func TestRefusalsRecordedAtABoundedRate(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	f := newFixture(t, func(c *Config) { c.Clock = func() time.Time { return now } })
	ctx := t.Context()
	run := f.gate.Open(pipCommand(t))
	const n = 5000
	for range n {
		if _, err := run.Dial(ctx, "nope.invalid", 443); err == nil {
			t.Fatal("a domain outside the list connected")
		}
	}
	run.Close(ctx)
	evs := f.log.Events()
	if len(evs) != RefusalBurst+1 {
		t.Fatalf("%d refused attempts wrote %d events, want %d one by one and one summary", n, len(evs), RefusalBurst+1)
	}
	last := evs[len(evs)-1]
	if last.Op != "network.connect" || last.Decision != audit.Deny || !strings.Contains(last.Detail, "4800 more refused connection attempts") || !strings.Contains(last.Detail, "for command 7") {
		t.Errorf("the summary: %+v", last)
	}
	if got := run.Summary(); len(got.Refused) != 1 {
		t.Errorf("the command's summary: %+v", got)
	}
	other := pipCommand(t)
	other.Client = "bob-agent"
	orun := f.gate.Open(other)
	if _, err := orun.Dial(ctx, "nope.invalid", 443); err == nil {
		t.Fatal("connected")
	}
	orun.Close(ctx)
	if evs := f.log.Events(); len(evs) != RefusalBurst+2 || evs[len(evs)-1].Client != "bob-agent" || strings.Contains(evs[len(evs)-1].Detail, "more refused") {
		t.Errorf("another agent's refusal was not recorded on its own: %+v", evs[len(evs)-1])
	}
	// Time refills the bucket: 50 a second.
	now = now.Add(time.Second)
	run2 := f.gate.Open(pipCommand(t))
	for range 60 {
		run2.Dial(ctx, "nope.invalid", 443)
	}
	run2.Close(ctx)
	if evs := f.log.Events(); len(evs) != RefusalBurst+2+RefusalsPerSecond+1 {
		t.Errorf("after a second, 60 refusals wrote %d events, want %d and one summary", len(evs)-RefusalBurst-2, RefusalsPerSecond)
	}
}
