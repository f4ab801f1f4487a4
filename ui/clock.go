package ui

import "time"

// Clock is the time source of the tray: the approval guard, countdowns
// and status polling read it, so tests can move time by hand instead of
// sleeping. Timer callbacks run on the clock's goroutine; the tray hands
// them to the UI goroutine itself.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
