package ui

import (
	"context"
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"corral/core/audit"
	"corral/ui/undowin"
)

// fakeUndoer is a Control that undoes: it answers each agent's last
// change from a table and records what it was asked. The undo window
// itself is tested in ui/undowin; here the tray's part: Recent activity
// offers it, and the tray opens one window.
type fakeUndoer struct {
	*fakeControl
	last  map[string]undowin.LastChange
	asked []string
}

func (u *fakeUndoer) LastChange(ctx context.Context, client string) (undowin.LastChange, error) {
	u.asked = append(u.asked, client)
	return u.last[client], nil
}

func (u *fakeUndoer) Undo(ctx context.Context, id int64) (string, error) {
	return "Undone: 2 files put back.", nil
}

func withUndoer(u **fakeUndoer, events *fakeEvents) func(*Config) {
	return func(c *Config) {
		*u = &fakeUndoer{fakeControl: c.Control.(*fakeControl), last: map[string]undowin.LastChange{}}
		c.Control = *u
		c.Events = events
	}
}

func changed(id int64, client, op string, d audit.Decision, paths ...string) audit.Event {
	e := audit.Event{ID: id, Time: time.Now(), Client: client, Op: op, Decision: d, DecidedBy: audit.ByScope}
	for _, p := range paths {
		e.Changes = append(e.Changes, audit.Change{Path: p, Kind: audit.Modified})
	}
	return e
}

// Recent activity offers "Undo: <the change in words>…" for the agents
// that changed files, the newest first; its button opens one undo window
// on the chosen agent's last change, which the tray forgets once closed.
func TestUndoFromRecentActivity(t *testing.T) {
	events := &fakeEvents{page: audit.Page{Events: []audit.Event{
		changed(3, "bob-agent", "file.read", audit.Allow),
		changed(2, "alice-agent", "command.run", audit.Allow, "notes.txt", "made.txt"),
	}}, ch: make(chan audit.Event)}
	var u *fakeUndoer
	h := newHarness(t, withUndoer(&u, events))
	u.last["alice-agent"] = undowin.LastChange{EventID: 2, Client: "alice-agent", Op: "command.run", Time: time.Now(), Files: []undowin.ChangedFile{
		{Path: "notes.txt", What: "changed; undoing puts its earlier content back"},
	}}
	h.loop.await(t)
	h.tray.showActivity()
	w := h.tray.actWin
	if w.undoBtn == nil || w.undoBtn.Text != "Undo: alice-agent's command changed 2 files…" || w.undoBtn.Disabled() {
		t.Fatalf("the undo button: %+v", w.undoBtn)
	}
	if !slices.Equal(w.undoPick.Options, []string{"alice-agent"}) {
		t.Errorf("agents offered %q", w.undoPick.Options)
	}

	test.Tap(w.undoBtn)
	h.loop.flush()
	uw := h.tray.undoWin
	if uw == nil || !slices.Equal(u.asked, []string{"alice-agent"}) || !h.tray.onScreen() {
		t.Fatalf("no undo window, or asked %q", u.asked)
	}

	// A live event by another agent: it is offered, first.
	events.ch <- changed(4, "bob-agent", "file.write", audit.Allow, "b.txt")
	h.loop.await(t)
	if !slices.Equal(w.undoPick.Options, []string{"bob-agent", "alice-agent"}) {
		t.Errorf("agents after bob's change %q", w.undoPick.Options)
	}
	w.undoPick.SetSelected("bob-agent")
	if w.undoBtn.Text != "Undo: bob-agent changed b.txt…" {
		t.Errorf("button after choosing bob %q", w.undoBtn.Text)
	}
	test.Tap(w.undoBtn)
	h.loop.flush()
	if h.tray.undoWin != uw || !slices.Equal(u.asked, []string{"alice-agent", "bob-agent"}) {
		t.Errorf("second agent: same window %v, asked %q", h.tray.undoWin == uw, u.asked)
	}

	for _, win := range h.tray.app.Driver().AllWindows() {
		if win.Title() == "Corral — undo last change" {
			win.Close()
		}
	}
	if h.tray.undoWin != nil {
		t.Error("closed undo window still referenced")
	}
}

// Without an Undoer nothing is offered.
func TestUndoAbsent(t *testing.T) {
	page := audit.Page{Events: []audit.Event{changed(2, "alice-agent", "file.write", audit.Allow, "a.txt")}}
	plain := newHarness(t, func(c *Config) { c.Events = &fakeEvents{page: page, ch: make(chan audit.Event)} })
	plain.loop.await(t)
	plain.tray.showActivity()
	if plain.tray.actWin.undoBtn != nil || plain.tray.undoer != nil {
		t.Error("undo offered without an Undoer")
	}
	plain.tray.showUndo("alice-agent")
	if plain.tray.undoWin != nil {
		t.Error("an undo window without an Undoer")
	}
}
