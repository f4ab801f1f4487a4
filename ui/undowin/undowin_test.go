package undowin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"corral/core/audit"
	"corral/ui/internal/shots"
)

// fakeUndoer answers each agent's last change from a table and records
// what it was asked to undo.
type fakeUndoer struct {
	last    map[string]LastChange
	lastErr error
	asked   []string
	undone  []int64
	undoErr error
}

func (u *fakeUndoer) LastChange(ctx context.Context, client string) (LastChange, error) {
	u.asked = append(u.asked, client)
	if u.lastErr != nil {
		return LastChange{}, u.lastErr
	}
	return u.last[client], nil
}

func (u *fakeUndoer) Undo(ctx context.Context, id int64) (string, error) {
	if u.undoErr != nil {
		return "", u.undoErr
	}
	u.undone = append(u.undone, id)
	return "Undone: 2 files put back.", nil
}

// fakeHost stands in for the tray: posted functions wait until the test
// runs them (flush); Spawn runs blocking work at once.
type fakeHost struct {
	app    fyne.App
	posted []func()
}

func (h *fakeHost) App() fyne.App            { return h.app }
func (h *fakeHost) Do(f func())              { h.posted = append(h.posted, f) }
func (h *fakeHost) Spawn(f func())           { f() }
func (h *fakeHost) Context() context.Context { return context.Background() }

func (h *fakeHost) flush() {
	for len(h.posted) > 0 {
		f := h.posted[0]
		h.posted = h.posted[1:]
		f()
	}
}

// newWindow makes an undo window over u; closed counts onClosed calls.
func newWindow(t *testing.T, u Undoer) (*Window, *fakeHost, *int) {
	h := &fakeHost{app: test.NewTempApp(t)}
	closed := new(int)
	return New(h, u, func() { *closed++ }), h, closed
}

func changed(id int64, client, op string, d audit.Decision, paths ...string) audit.Event {
	e := audit.Event{ID: id, Time: time.Now(), Client: client, Op: op, Decision: d, DecidedBy: audit.ByScope}
	for _, p := range paths {
		e.Changes = append(e.Changes, audit.Change{Path: p, Kind: audit.Modified})
	}
	return e
}

// The agents offered are those whose recent events changed files: not
// reads, not refusals, not the owner's own undos and restores.
func TestUndoAgents(t *testing.T) {
	evs := []audit.Event{
		changed(9, "owner", "undo.apply", audit.Allow, "a.txt"),
		changed(8, "tray", "version.restore", audit.Allow, "a.txt"),
		changed(7, "bob-agent", "file.read", audit.Allow),
		changed(6, "carol-agent", "file.write", audit.Deny, "x"),
		changed(5, "bob-agent", "command.run", audit.Allow, "b.txt"),
		changed(4, "alice-agent", "file.write", audit.Allow, "a.txt"),
		changed(3, "bob-agent", "file.edit", audit.Allow, "c.txt"),
	}
	if got := Agents(evs); !slices.Equal(got, []string{"bob-agent", "alice-agent"}) {
		t.Errorf("agents %q", got)
	}
}

// The tray's undo button names the change in words, not an operation's
// name: a folder a command deleted is "deleted folder project/ (30
// files)".
func TestUndoLabelWords(t *testing.T) {
	deleted := audit.Event{ID: 9, Client: "claude-desktop", Op: "command.run", Decision: audit.Allow, Target: "rm -rf project"}
	for i := range 30 {
		dir := "project"
		if i%3 == 0 {
			dir = "project/src"
		}
		deleted.Changes = append(deleted.Changes, audit.Change{Path: fmt.Sprintf("%s/f%02d.py", dir, i), Kind: audit.Deleted})
	}
	moved := changed(5, "bob-agent", "file.move", audit.Allow, "new.txt")
	moved.Changes[0].Kind, moved.Changes[0].From = audit.Moved, "old.txt"
	cases := []struct {
		events []audit.Event
		client string
		want   string
	}{
		{[]audit.Event{deleted}, "claude-desktop", "Undo: claude-desktop deleted folder project/ (30 files)…"},
		{[]audit.Event{changed(7, "bob-agent", "file.read", audit.Allow), moved}, "bob-agent", "Undo: bob-agent moved new.txt…"},
		{[]audit.Event{changed(3, "alice-agent", "file.write", audit.Allow, "a.txt", "b/c.txt")}, "alice-agent", "Undo: alice-agent changed 2 files…"},
		{nil, "alice-agent", "Undo last change by alice-agent…"},
		{nil, "", "Undo last change by …"},
	}
	for _, c := range cases {
		if got := Label(c.client, c.events); got != c.want {
			t.Errorf("label for %s: %q, want %q", c.client, got, c.want)
		}
	}
}

// The window says what the agent's last change was and undoes it only
// when the owner confirms with "Undo it"; a conflict keeps Undo it off; a
// missing change shows the Undoer's sentence and only Close.
func TestUndoWindow(t *testing.T) {
	u := &fakeUndoer{last: map[string]LastChange{}}
	u.last["alice-agent"] = LastChange{EventID: 2, Client: "alice-agent", Op: "command.run", Time: time.Now(), Files: []ChangedFile{
		{Path: "notes.txt", What: "changed; undoing puts its earlier content back"},
		{Path: "made.txt", What: "created; undoing removes it"},
	}}
	uw, h, closed := newWindow(t, u)
	uw.Load("alice-agent")
	h.flush()
	if uw.win.Title() != undoTitle || !slices.Equal(u.asked, []string{"alice-agent"}) {
		t.Fatalf("title %q, asked %q", uw.win.Title(), u.asked)
	}
	for _, want := range []string{"The last change by alice-agent: ran a command at", "(event 2), 2 files.", "Undo it?"} {
		if !strings.Contains(uw.head.Text, want) {
			t.Errorf("head %q lacks %q", uw.head.Text, want)
		}
	}
	if strings.Contains(uw.head.Text, "command.run") {
		t.Errorf("head names the raw operation: %q", uw.head.Text)
	}
	if uw.files.Text != "notes.txt — changed; undoing puts its earlier content back.\nmade.txt — created; undoing removes it." {
		t.Errorf("files %q", uw.files.Text)
	}
	if len(u.undone) != 0 || uw.confirm.Disabled() || !uw.confirm.Visible() {
		t.Fatalf("before confirming: undone %v, confirm disabled %v", u.undone, uw.confirm.Disabled())
	}
	shots.Save(t, "tray-undo", uw.win.Canvas().Capture)
	test.Tap(uw.confirm)
	h.flush()
	if !slices.Equal(u.undone, []int64{2}) || uw.status.Text != "Undone: 2 files put back." || uw.confirm.Visible() || uw.cancel.Text != labelClose {
		t.Errorf("after Undo it: undone %v, status %q, confirm visible %v, cancel %q", u.undone, uw.status.Text, uw.confirm.Visible(), uw.cancel.Text)
	}
	test.Tap(uw.confirm) // hidden and spent: nothing more
	h.flush()
	if len(u.undone) != 1 {
		t.Errorf("undone again: %v", u.undone)
	}

	// A conflict: said, and Undo it stays off.
	u.last["bob-agent"] = LastChange{EventID: 4, Client: "bob-agent", Op: "file.write", Time: time.Now(), Files: []ChangedFile{
		{Path: "b.txt", What: "changed", Conflict: "b.txt changed after this event, so Corral will not overwrite it."},
	}}
	uw.Load("bob-agent")
	h.flush()
	if !strings.Contains(uw.files.Text, "b.txt — cannot be undone: b.txt changed after this event") || !strings.Contains(uw.head.Text, "None of it can be undone") || !uw.confirm.Disabled() {
		t.Errorf("conflict: head %q files %q confirm disabled %v", uw.head.Text, uw.files.Text, uw.confirm.Disabled())
	}
	test.Tap(uw.confirm)
	h.flush()
	if len(u.undone) != 1 {
		t.Errorf("a conflicting change was undone: %v", u.undone)
	}

	// No change to undo: the Undoer's sentence, and only Close.
	u.lastErr = errors.New("bob-agent has changed no files that Corral kept.")
	uw.Load("bob-agent")
	h.flush()
	if uw.head.Text != "bob-agent has changed no files that Corral kept." || uw.confirm.Visible() || uw.cancel.Text != labelClose {
		t.Errorf("no change: head %q, confirm visible %v", uw.head.Text, uw.confirm.Visible())
	}
	uw.win.Close()
	if *closed != 1 {
		t.Errorf("onClosed ran %d times", *closed)
	}
}

// An answer about an agent no longer shown is dropped.
func TestUndoWindowStaleAnswer(t *testing.T) {
	u := &fakeUndoer{last: map[string]LastChange{
		"alice-agent": {EventID: 2, Client: "alice-agent", Op: "file.write", Time: time.Now(), Files: []ChangedFile{{Path: "a.txt", What: "changed"}}},
	}}
	uw, h, _ := newWindow(t, u)
	uw.Load("alice-agent") // its answer is posted, not yet shown…
	uw.Load("bob-agent")   // …when the owner picks another agent
	h.posted = h.posted[:1]
	h.flush()
	if uw.head.Text != "Looking at the last change by bob-agent…" || uw.event != 0 {
		t.Errorf("alice's answer shown for bob: head %q, event %d", uw.head.Text, uw.event)
	}
}

// A refused undo says so.
func TestUndoRefused(t *testing.T) {
	u := &fakeUndoer{last: map[string]LastChange{
		"alice-agent": {EventID: 2, Client: "alice-agent", Op: "file.write", Time: time.Now(), Files: []ChangedFile{{Path: "a.txt", What: "changed"}}},
	}}
	u.undoErr = errors.New("1 of the files event 2 changed have changed again since; nothing was undone.")
	uw, h, _ := newWindow(t, u)
	uw.Load("alice-agent")
	h.flush()
	test.Tap(uw.confirm)
	h.flush()
	if !strings.HasPrefix(uw.status.Text, "Nothing was undone: 1 of the files") || uw.confirm.Visible() {
		t.Errorf("refused: status %q", uw.status.Text)
	}
}
