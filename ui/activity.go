package ui

import (
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"corral/core/audit"
	"corral/core/visible"
	"corral/core/words"
	"corral/ui/undowin"
)

// activityMax is how many events the Recent activity window keeps.
const activityMax = 50

// activity is the last events, newest first, without duplicates.
type activity struct {
	events []audit.Event
}

// load adds a page from the log (newest first), oldest first so the
// newest ends on top.
func (a *activity) load(evs []audit.Event) {
	for i := len(evs) - 1; i >= 0; i-- {
		a.add(evs[i])
	}
}

// add puts e first unless it is already there; it reports whether the
// list changed.
func (a *activity) add(e audit.Event) bool {
	if slices.ContainsFunc(a.events, func(x audit.Event) bool { return x.ID == e.ID }) {
		return false
	}
	a.events = slices.Insert(a.events, 0, e)
	if len(a.events) > activityMax {
		a.events = a.events[:activityMax]
	}
	return true
}

// eventLine is one row in core/words' words, as the dashboard's Activity
// says it: "14:03:07  alice-agent  Read a file  /etc/hosts  Denied (nobody
// asked)"; the owner is "you", a paired device goes by its name.
func eventLine(e audit.Event) string {
	parts := []string{e.Time.Local().Format(time.TimeOnly), visible.Line(words.Who(e.Client)), words.OpLabel(visible.Line(e.Op))}
	if e.Target != "" {
		parts = append(parts, clip(visible.Line(e.Target), 60)) // an agent's text: hidden characters shown
	}
	d := words.DecisionLabel(e.Decision)
	if by, ok := words.DecidedBy[e.DecidedBy]; ok {
		d += " (" + by + ")"
	}
	return strings.Join(append(parts, d), "  ")
}

// eventURL opens the dashboard at one event: a fresh login URL whose
// fragment names the event. The login redirect keeps the fragment, so the
// dashboard sees "#event=ID" and can scroll to it.
func eventURL(login, id string) string {
	if i := strings.IndexByte(login, '#'); i >= 0 {
		login = login[:i]
	}
	return login + "#event=" + id
}

// activityWindow is the Recent activity window: the model rendered as a
// list; choosing a row opens the dashboard at that event.
type activityWindow struct {
	t    *Tray
	win  fyne.Window
	list *widget.List
	note *widget.Label
	// "Undo last change by …" (only with an Undoer): the agent to undo
	// and the button that shows that agent's last change.
	undoPick *widget.Select
	undoBtn  *widget.Button
}

func newActivityWindow(t *Tray) *activityWindow {
	w := &activityWindow{t: t, win: t.app.NewWindow("Corral — recent activity")}
	w.note = widget.NewLabel("The last 50 events, newest first. Choose one to open it in the dashboard.")
	w.note.Wrapping = fyne.TextWrapWord
	w.list = widget.NewList(
		func() int { return len(t.activity.events) },
		func() fyne.CanvasObject { return widget.NewLabel("00:00:00  client  op  target  decision") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(t.activity.events) {
				o.(*widget.Label).SetText(eventLine(t.activity.events[i]))
			}
		},
	)
	w.list.OnSelected = func(i widget.ListItemID) {
		w.list.UnselectAll()
		if i < len(t.activity.events) {
			t.openEvent(t.activity.events[i].ID)
		}
	}
	var bottom fyne.CanvasObject
	if t.undoer != nil {
		w.undoPick = widget.NewSelect(nil, func(string) { w.undoBtn.SetText(undowin.Label(w.undoPick.Selected, t.activity.events)) })
		w.undoPick.PlaceHolder = "(agent)"
		w.undoBtn = widget.NewButton(undowin.Label("", nil), func() { t.showUndo(w.undoPick.Selected) })
		bottom = container.NewBorder(nil, nil, nil, w.undoPick, w.undoBtn)
	}
	w.win.SetContent(container.NewBorder(w.note, bottom, nil, nil, w.list))
	w.win.Resize(activitySize)
	return w
}

func (w *activityWindow) refresh() {
	if w.t.actErr != nil {
		w.note.SetText("Could not read the audit log: " + w.t.actErr.Error())
	}
	w.list.Refresh()
	if w.undoPick != nil {
		agents := undowin.Agents(w.t.activity.events)
		w.undoPick.SetOptions(agents)
		if !slices.Contains(agents, w.undoPick.Selected) {
			if len(agents) > 0 {
				w.undoPick.SetSelected(agents[0])
			} else {
				w.undoPick.ClearSelected()
			}
		}
		w.undoBtn.SetText(undowin.Label(w.undoPick.Selected, w.t.activity.events))
		if w.undoPick.Selected == "" {
			w.undoBtn.Disable()
		} else {
			w.undoBtn.Enable()
		}
	}
}

func (w *activityWindow) show() {
	w.refresh()
	w.win.Show()
}

// activitySize is the Recent activity window's size; the undo window it
// opens has the same (see undowin.Size).
var activitySize = undowin.Size

// showUndo opens (or reuses) the undo window for client's last change.
func (t *Tray) showUndo(client string) {
	if t.undoer == nil || client == "" {
		return
	}
	if t.undoWin == nil {
		t.undoWin = undowin.New(trayHost{t}, t.undoer, func() { t.undoWin = nil; t.settle() })
	}
	t.undoWin.Load(client)
	t.undoWin.Focus()
}
