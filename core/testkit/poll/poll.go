// Package poll is for tests that wait for something another goroutine or
// process does: Eventually polls a condition until it holds or a deadline
// passes, instead of a loop of time.Now, time.Sleep and t.Fatal written
// out in each test, and instead of a fixed sleep. Pick a deadline that
// holds on a loaded 2-core machine (seconds, not milliseconds): the poll
// returns as soon as the condition holds, so a generous deadline costs
// nothing when all is well. It is for tests only.
package poll

import (
	"fmt"
	"testing"
	"time"
)

// Eventually calls cond until it returns true, and fails t (Fatal) when
// within passes first, saying it timed out waiting for the message
// (format and args, as fmt.Sprintf). It sleeps a little between calls: 1
// ms at first, doubling up to 20 ms. Call it from the test's goroutine.
func Eventually(t testing.TB, within time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(within)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, fmt.Sprintf(format, args...))
			return
		}
		time.Sleep(wait)
	}
}

// EventuallyNil is Eventually for a check that says why it does not hold
// yet: it polls f until f returns nil, and on timeout the failure ends
// with f's last error.
func EventuallyNil(t testing.TB, within time.Duration, f func() error, format string, args ...any) {
	t.Helper()
	var last error
	Eventually(t, within, func() bool { last = f(); return last == nil }, "%s (last: %v)", fmt.Sprintf(format, args...), lastErr{&last})
}

// lastErr prints *p when the message is made, after the last poll.
type lastErr struct{ p *error }

func (e lastErr) String() string { return fmt.Sprint(*e.p) }
