// Package fakeclock is time that tests move: Clock stands still until the
// test moves it, and fires the timers that come due on the goroutine that
// moved it; Shifted is real time plus an offset the test sets, for a
// whole daemon whose parts also wait on real timers. Both are safe for
// concurrent use. They are for tests only; where a test only needs time
// to pass for timers inside one goroutine tree, testing/synctest is the
// better tool.
package fakeclock

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a clock moved by hand. Pass its Now (and AfterFunc) where the
// code under test takes a clock.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	at      time.Time
	f       func()
	stopped bool
}

// New returns a Clock standing at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to run when the clock has been moved d on, and
// returns a stop function reporting, as time.Timer.Stop does, whether it
// stopped the timer before it fired.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// Advance moves the clock on by d and runs the timers that came due, in
// the order of their due time, on the caller's goroutine.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	keep := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(c.now):
			tm.stopped = true
			due = append(due, tm)
		default:
			keep = append(keep, tm)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.f()
	}
}

// Shifted is real time plus an offset; its zero value is real time.
type Shifted struct{ offset atomic.Int64 }

// Now returns real time plus the offset.
func (c *Shifted) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Shift sets the clock d away from real time (0 goes back to real time).
func (c *Shifted) Shift(d time.Duration) { c.offset.Store(int64(d)) }
