package poll

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder stands in for the test: it records Fatalf instead of ending
// the goroutine.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	r := &recorder{TB: t}
	Eventually(r, 10*time.Second, func() bool { return n.Load() == 3 }, "three")
	if r.failed != "" {
		t.Fatal(r.failed)
	}
}

func TestEventuallyFailsAtItsDeadline(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	Eventually(r, 50*time.Millisecond, func() bool { return false }, "the %s", "moon")
	if r.failed != "timed out after 50ms waiting for the moon" {
		t.Errorf("failure: %q", r.failed)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("gave up after %v, before its deadline", time.Since(start))
	}
}

func TestEventuallyNilSaysTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	EventuallyNil(r, 30*time.Millisecond, func() error { calls++; return fmt.Errorf("not yet (%d)", calls) }, "the disk")
	want := fmt.Sprintf("waiting for the disk (last: not yet (%d))", calls)
	if !strings.HasSuffix(r.failed, want) {
		t.Errorf("failure %q, want it to end with %q", r.failed, want)
	}
	r = &recorder{TB: t}
	EventuallyNil(r, 10*time.Second, func() error { return errors.Join() }, "nil at once")
	if r.failed != "" {
		t.Error(r.failed)
	}
}
