package ratelimit

import (
	"context"
	"testing"
	"time"

	"corral/core/audit"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 12: "12", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCallLimiterClockBack: a clock set back (NTP, a test) must not stop
// the bucket refilling until it catches up again.
func TestCallLimiterClockBack(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var summaries []Refusals
	l := New(func() time.Time { return now }, 50, 2, func(_ context.Context, r Refusals) { summaries = append(summaries, r) })
	ctx := context.Background()
	for range 2 {
		if err := l.Take(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Take(ctx, "a"); err == nil {
		t.Fatal("a third call at once was taken")
	}
	if err := l.Take(ctx, "b"); err != nil {
		t.Errorf("another agent's call: %v", err)
	}
	now = now.Add(-time.Hour)
	l.Take(ctx, "a") // refused: nothing refilled yet
	now = now.Add(time.Second)
	if err := l.Take(ctx, "a"); err != nil {
		t.Errorf("a second after the clock went back: %v", err)
	}
	if len(summaries) != 1 || summaries[0].Count != 2 || summaries[0].Client != "a" {
		t.Errorf("summaries: %+v, want one of 2 refusals", summaries)
	}
}

// TestEventCountsTheStretch: the summary names the agent, the count (one
// call, or many with thousands separated) and the stretch, as a denial.
func TestEventCountsTheStretch(t *testing.T) {
	first := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := first.Add(time.Minute)
	ev := Event(Refusals{Client: "bot", Count: 1234, First: first, Last: first.Add(30 * time.Second)}, at)
	want := "refused 1,234 calls from bot over the rate limit between 2026-11-27T12:00:00Z and 2026-11-27T12:00:30Z"
	if ev.Op != "agent.throttled" || ev.Client != "bot" || ev.Target != "bot" || ev.Decision != audit.Deny || !ev.Time.Equal(at) || ev.Detail != want {
		t.Errorf("event %+v", ev)
	}
	if ev := Event(Refusals{Client: "bot", Count: 1, First: first, Last: first}, at); ev.Detail[:20] != "refused 1 call from " {
		t.Errorf("one call: %q", ev.Detail)
	}
}
