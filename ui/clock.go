package ui

import "time"

// The tray reads time through Config.Clock and sets its timers through
// Config.AfterFunc — the approval guard, countdowns and status polling —
// so tests move time by hand instead of sleeping. Timer callbacks run on
// the timer's goroutine; the tray hands them to the UI goroutine itself.

// realAfterFunc is time.AfterFunc, returning its Stop.
func realAfterFunc(d time.Duration, f func()) (stop func() bool) {
	return time.AfterFunc(d, f).Stop
}
