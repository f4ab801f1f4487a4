package ui

import (
	"context"
	"time"

	"fyne.io/fyne/v2"
)

// trayHost is the tray as the windows of its subpackages (pairwin,
// undowin) see it: the Fyne app, the clock, and the ways onto and off the
// UI goroutine. It reads the tray's fields at each call, so a test that
// replaces spawn or post after the start is obeyed.
type trayHost struct{ t *Tray }

func (h trayHost) App() fyne.App                                   { return h.t.app }
func (h trayHost) Now() time.Time                                  { return h.t.now() }
func (h trayHost) AfterFunc(d time.Duration, f func()) func() bool { return h.t.afterFunc(d, f) }
func (h trayHost) Do(f func())                                     { h.t.do(f) }
func (h trayHost) Spawn(f func())                                  { h.t.spawn(f) }
func (h trayHost) Context() context.Context                        { return h.t.ctx }
