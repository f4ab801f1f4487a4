package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"corral/core/policy"
	"corral/core/testkit/auditmem"
	"corral/core/testkit/fakeclock"
	"corral/ui/internal/shots"
)

// TestDialogDenyWithReason: the approval dialog has a field for the
// owner's reason between the allow and the deny buttons; typed there, it
// travels with Deny (and with Enter, which denies once) to the real
// policy, whose outcome carries it as one visible line; an allow never
// carries it, and the next approval starts with an empty field.
func TestDialogDenyWithReason(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	pol, err := policy.New(t.Context(), policy.Config{Rules: &memRules{}, Audit: &auditmem.Log{}, Timeout: time.Minute, Strict: true, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	loop := newUILoop()
	tr := newTray(a, nil, Config{Broker: pol, Control: &fakeControl{}, Clock: clock.Now, AfterFunc: clock.AfterFunc})
	tr.post = loop.post
	tr.spawn = func(f func()) { f() }
	tr.Start(t.Context())
	defer tr.Stop()

	ask := func(target string) chan policy.Outcome {
		out := make(chan policy.Outcome, 1)
		go func() {
			o, err := pol.Check(context.Background(), policy.Request{Client: "alice-agent", Scope: "alice", Access: policy.Read, Target: target})
			if err != nil {
				t.Error(err)
			}
			out <- o
		}()
		loop.await(t)
		clock.Advance(GuardDelay)
		loop.flush()
		return out
	}
	outcome := func(ch chan policy.Outcome) policy.Outcome {
		t.Helper()
		select {
		case o := <-ch:
			loop.flush()
			return o
		case <-time.After(5 * time.Second):
			t.Fatal("the agent's call did not return")
		}
		return policy.Outcome{}
	}

	out := ask("/srv/data/a.csv")
	d := tr.dialog
	if d.reason.PlaceHolder != reasonHint || !d.reason.Visible() {
		t.Fatalf("reason field: visible %v, placeholder %q", d.reason.Visible(), d.reason.PlaceHolder)
	}
	// Between the allow row and the deny row.
	at := func(o fyne.CanvasObject) float32 { return a.Driver().AbsolutePositionForObject(o).Y }
	allowY, denyY := at(d.buttons[policy.AllowOnce]), at(d.buttons[policy.DenyOnce])
	if y := at(d.reason); !(y > allowY && y < denyY) {
		t.Errorf("reason field at y=%v, allow row at %v, deny row at %v", y, allowY, denyY)
	}
	test.Type(d.reason, "use the share folder\tinstead")
	shots.Save(t, "deny-reason-native-dialog", d.win.Canvas().Capture)
	test.Tap(d.buttons[policy.DenyOnce])
	if o := outcome(out); o.Allowed || o.Decision != policy.DenyOnce || o.Via != "dialog" || o.Reason != "use the share folder instead" {
		t.Errorf("outcome after Deny with a reason: %+v", o)
	}

	// The next one starts empty; Enter in the field denies once.
	out = ask("/srv/data/b.csv")
	if d.reason.Text != "" {
		t.Errorf("the next approval shows the last reason %q", d.reason.Text)
	}
	test.Type(d.reason, "not now \x1b[31m")
	d.reason.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if o := outcome(out); o.Allowed || o.Decision != policy.DenyOnce || o.Reason != `not now \x1b[31m` {
		t.Errorf("outcome after Enter in the reason field: %+v", o)
	}

	// An allow never carries what was typed.
	out = ask("/srv/data/c.csv")
	test.Type(d.reason, "ignored")
	test.Tap(d.buttons[policy.AllowOnce])
	if o := outcome(out); !o.Allowed || o.Reason != "" {
		t.Errorf("outcome after Allow once with text in the field: %+v", o)
	}

	// Longer than the policy keeps: the field stops at MaxAnswerReason.
	out = ask("/srv/data/d.csv")
	test.Type(d.reason, strings.Repeat("x", policy.MaxAnswerReason+20))
	if n := len([]rune(d.reason.Text)); n != policy.MaxAnswerReason {
		t.Errorf("reason field holds %d runes", n)
	}
	test.Tap(d.buttons[policy.DenyOnce])
	if o := outcome(out); o.Reason != strings.Repeat("x", policy.MaxAnswerReason) {
		t.Errorf("a reason of %d runes reached the policy", len([]rune(o.Reason)))
	}
}
