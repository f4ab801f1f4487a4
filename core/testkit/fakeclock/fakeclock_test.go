package fakeclock

import (
	"slices"
	"testing"
	"time"
)

func TestClockFiresDueTimersInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "two") })
	c.AfterFunc(time.Second, func() { fired = append(fired, "one") })
	stop := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	if !stop() || stop() {
		t.Error("stop before firing: want true, then false")
	}
	c.Advance(500 * time.Millisecond)
	if len(fired) != 0 {
		t.Errorf("fired early: %v", fired)
	}
	c.Advance(2 * time.Second)
	if !slices.Equal(fired, []string{"one", "two"}) || !c.Now().Equal(start.Add(2500*time.Millisecond)) {
		t.Errorf("fired %v at %v", fired, c.Now())
	}
}

func TestShifted(t *testing.T) {
	var c Shifted
	c.Shift(time.Hour)
	if d := c.Now().Sub(time.Now()); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("shifted by %v, want an hour", d)
	}
	c.Shift(0)
	if d := time.Since(c.Now()); d < -time.Minute || d > time.Minute {
		t.Errorf("back to real time: off by %v", d)
	}
}
