package policy

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"corral/core/errs"
)

// TestDenyWithReason: the owner's sentence with a denial reaches the
// waiting request's outcome as one visible line, cut to MaxAnswerReason;
// an allow cannot carry one; WithReason ends the agent's sentence with it.
func TestDenyWithReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		ch := check(p, context.Background(), readTax)
		a := <-s.asked
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowOnce, Reason: "fine"}); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("allow with a reason: %v", err)
		}
		hostile := "  use the share\nfolder \x1b[31minstead\u202e  "
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: DenyOnce, Reason: hostile}); err != nil {
			t.Fatal(err)
		}
		out := <-ch
		if out.Allowed || out.Reason != `use the share folder \x1b[31minstead\u202e` {
			t.Fatalf("outcome: %+v", out)
		}
	})
	if got := AnswerReason(strings.Repeat("é", 700)); !strings.HasPrefix(got, strings.Repeat("é", MaxAnswerReason)+"…") || strings.Count(got, "é") != MaxAnswerReason {
		t.Errorf("not cut: %q", got)
	}
	for _, c := range []struct{ sentence, reason, want string }{
		{"The owner denied access to /x.", "", "The owner denied access to /x."},
		{"The owner denied access to /x.", "use the share folder instead", "The owner denied access to /x: use the share folder instead."},
		{"The owner denied access to /x.", "Not today!", "The owner denied access to /x: Not today!"},
	} {
		if got := WithReason(c.sentence, c.reason); got != c.want {
			t.Errorf("WithReason(%q, %q) = %q", c.sentence, c.reason, got)
		}
	}
}
