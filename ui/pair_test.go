package ui

import (
	"context"
	"testing"
	"time"

	"corral/ui/pairwin"
)

// fakePairer is a Control that pairs: each call makes a one-module code
// valid five minutes from the clock's now. The window itself is tested in
// ui/pairwin; here the tray's part: the menu item and the one window.
type fakePairer struct {
	*fakeControl
	now   func() time.Time
	calls int
}

func (p *fakePairer) Pair(ctx context.Context) (pairwin.Code, error) {
	p.calls++
	return pairwin.Code{URL: "http://192.168.1.20:8765/pair?code=c", QR: []string{"1"}, Expires: p.now().Add(5 * time.Minute)}, nil
}

func withPairer(p **fakePairer) func(*Config) {
	return func(c *Config) {
		*p = &fakePairer{fakeControl: c.Control.(*fakeControl), now: c.Clock}
		c.Control = *p
	}
}

func TestMenuOffersPairingOnlyWithAPairer(t *testing.T) {
	h := newHarness(t)
	for _, it := range h.icon.menu() {
		if it.Label == labelPair || it.Action == actPair {
			t.Fatalf("a Control that cannot pair got %+v", it)
		}
	}
	h.tray.choose(menuItem{Action: actPair}) // a stale menu: nothing happens
	if h.tray.pairWin != nil {
		t.Fatal("pairing window without a Pairer")
	}

	var p *fakePairer
	h = newHarness(t, withPairer(&p))
	if it := h.icon.item(t, labelPair); it.Action != actPair {
		t.Errorf("pair item %+v", it)
	}
}

// The menu item opens one pairing window with a fresh code; choosing it
// again keeps that window and its code; closing it lets the tray forget it.
func TestPairWindowFromTheMenu(t *testing.T) {
	var p *fakePairer
	h := newHarness(t, withPairer(&p))
	h.icon.choose(h.icon.item(t, labelPair))
	h.loop.flush()
	w := h.tray.pairWin
	if w == nil || !w.Open() || !h.tray.onScreen() || p.calls != 1 {
		t.Fatalf("no pairing window, or %d calls", p.calls)
	}
	h.tray.choose(menuItem{Action: actPair})
	h.loop.flush()
	if h.tray.pairWin != w || p.calls != 1 {
		t.Errorf("menu item again: same window %v, %d calls", h.tray.pairWin == w, p.calls)
	}
	for _, win := range h.tray.app.Driver().AllWindows() {
		if win.Title() == "Corral — pair a phone" {
			win.Close()
		}
	}
	if h.tray.pairWin != nil || h.tray.onScreen() {
		t.Error("closed pairing window still referenced")
	}
}
