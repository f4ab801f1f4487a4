// Package undowin is the tray's "Undo last change" window and the words
// the Recent activity window uses to offer it: which agents have a change
// to take back (Agents) and what the button says (Label). The window asks
// an Undoer for the agent's last change, shows each file with what
// undoing does or why it cannot, and undoes it only when the owner
// confirms with "Undo it".
//
// Guaranteed: the Undoer is called only off the UI goroutine (Host.Spawn)
// and its answers are shown on it (Host.Do); nothing is undone without
// the press of "Undo it", which is offered only when no file conflicts,
// and pressed once; an answer about an agent no longer shown is dropped;
// an agent's texts (names, paths) reach the screen through visible.Line.
//
// Not guaranteed: that what was shown is still what the undo finds — the
// Undoer checks again and refuses a conflict, and the window shows its
// sentence. The window decides nothing itself. It imports nothing of ui or
// app/.
package undowin

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"corral/core/audit"
	"corral/core/visible"
	"corral/core/words"
)

// Host is what the window needs of the tray that opens it.
type Host interface {
	App() fyne.App
	// Do runs f on the UI goroutine, unless the tray has stopped by then.
	Do(f func())
	// Spawn runs blocking work off the UI goroutine.
	Spawn(f func())
	// Context bounds the calls into Corral.
	Context() context.Context
}

// Size is the window's size, that of the Recent activity window it opens
// from: without a window manager (windows stacked at the screen's corner,
// unframed) the undo window then covers it whole rather than leaving its
// rows beside and below the question.
var Size = fyne.NewSize(720, 480)

// Undoer is a Control that can take back what an agent changed. The
// Recent activity window offers "Undo last change by …" only when the
// tray's Control is one; it is a separate interface, as Pairer is, so
// that a Control without undo need not pretend.
type Undoer interface {
	// LastChange previews undoing client's newest change that can be
	// undone. When there is none, the error is a sentence for the owner.
	LastChange(ctx context.Context, client string) (LastChange, error)
	// Undo undoes everything the event changed and returns a sentence
	// saying what it did. A file changed again since is a conflict: the
	// error says so and nothing is written.
	Undo(ctx context.Context, eventID int64) (string, error)
}

// LastChange is an agent's newest change, as undoing it would put it
// back.
type LastChange struct {
	EventID int64
	Client  string
	Op      string
	Time    time.Time
	Files   []ChangedFile
}

// ChangedFile is one file of a LastChange.
type ChangedFile struct {
	Path string
	// What the change did and what undoing does, in words: "changed;
	// undoing puts its earlier content back".
	What string
	// Conflict says why the file cannot be put back ("" when it can).
	Conflict string
}

// Conflicts counts the files that cannot be put back.
func (c LastChange) Conflicts() int {
	n := 0
	for _, f := range c.Files {
		if f.Conflict != "" {
			n++
		}
	}
	return n
}

// Labels of the undo window that tests look for.
const (
	undoTitle   = "Corral — undo last change"
	labelUndo   = "Undo it"
	labelCancel = "Cancel"
	labelClose  = "Close"
)

// Label is the Recent activity button for client: the change it
// undoes in words ("Undo: claude-desktop deleted folder project/ (30
// files)…"), from the newest of events that client can undo.
func Label(client string, events []audit.Event) string {
	if client == "" {
		return "Undo last change by …"
	}
	for _, e := range events {
		if e.Client == client && undoable(e) {
			return clip("Undo: "+changeWords(e), 100) + "…"
		}
	}
	return "Undo last change by " + visible.Line(client) + "…"
}

// undoable reports whether e is an agent's change the tray offers to
// undo: allowed, with files changed, not the owner's own undo or restore.
func undoable(e audit.Event) bool {
	return len(e.Changes) > 0 && e.Decision == audit.Allow && !strings.HasPrefix(e.Op, "undo.") && e.Op != "version.restore"
}

var kindVerbs = map[audit.ChangeKind]string{audit.Created: "created", audit.Modified: "changed", audit.Deleted: "deleted", audit.Moved: "moved"}

// changeWords says what event e changed, in words: "alice-agent changed
// notes.txt", "claude-desktop deleted folder project/ (30 files)",
// "bob-agent's command changed 4 files".
func changeWords(e audit.Event) string {
	who := visible.Line(e.Client)
	var files []audit.Change
	for _, c := range e.Changes {
		if !c.Dir {
			files = append(files, c)
		}
	}
	n := len(files)
	switch {
	case n == 0:
		return fmt.Sprintf("%s made %d folder%s", who, len(e.Changes), plural(len(e.Changes)))
	case n == 1:
		return fmt.Sprintf("%s %s %s", who, kindVerbs[files[0].Kind], clip(visible.Line(files[0].Path), 60))
	}
	deleted := true
	for _, c := range files {
		deleted = deleted && c.Kind == audit.Deleted
	}
	if dir := commonFolder(files); deleted && dir != "" {
		return fmt.Sprintf("%s deleted folder %s/ (%d files)", who, clip(visible.Line(dir), 60), n)
	} else if deleted {
		return fmt.Sprintf("%s deleted %d files", who, n)
	}
	if e.Op == "command.run" {
		return fmt.Sprintf("%s's command changed %d files", who, n)
	}
	return fmt.Sprintf("%s changed %d files", who, n)
}

// commonFolder is the deepest folder holding every file of cs, or ""
// when that is the top of the agent's folder.
func commonFolder(cs []audit.Change) string {
	dir := path.Dir(cs[0].Path)
	for _, c := range cs[1:] {
		for dir != "." && dir != "/" && !strings.HasPrefix(c.Path, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	if dir == "." || dir == "/" {
		return ""
	}
	return dir
}

// Agents lists the agents of the recent events that changed files,
// the most recent first: those whose last change the tray can offer to
// undo. The owner's own undos and restores are not agents' changes.
func Agents(events []audit.Event) []string {
	var out []string
	for _, e := range events {
		if !undoable(e) {
			continue
		}
		if !slices.Contains(out, e.Client) {
			out = append(out, e.Client)
		}
	}
	return out
}

// lastChangeText is the undo window's text: what the change was, each
// file with what undoing does or why it cannot, and what pressing the
// button will do.
func lastChangeText(c LastChange) (head, files string) {
	n := len(c.Files)
	head = fmt.Sprintf("The last change by %s: %s at %s (event %d), %d file%s.",
		visible.Line(words.Who(c.Client)), opWords(c.Op), c.Time.Local().Format(time.DateTime), c.EventID, n, plural(n))
	var b strings.Builder
	for _, f := range c.Files {
		b.WriteString(clip(visible.Line(f.Path), 80))
		if f.Conflict != "" {
			b.WriteString(" — cannot be undone: " + visible.Line(f.Conflict))
		} else {
			b.WriteString(" — " + f.What + ".")
		}
		b.WriteByte('\n')
	}
	switch k := c.Conflicts(); {
	case k == n:
		head += " None of it can be undone from here: every file changed again since. The dashboard can restore single files."
	case k > 0:
		head += fmt.Sprintf(" %d of the files changed again since, so undoing would be refused; the dashboard can restore the others one by one.", k)
	default:
		head += " Undo it? Corral keeps what the undo replaces, so the undo can itself be undone from the dashboard."
	}
	return head, strings.TrimSuffix(b.String(), "\n")
}

// opWords is an operation in core/words' words, lower-cased to sit in a
// sentence ("ran a command"), never its raw name ("command.run").
func opWords(op string) string {
	l := visible.Line(words.OpLabel(op))
	if l == op || l == "" {
		return l
	}
	return strings.ToLower(l[:1]) + l[1:]
}

// clip shortens s to at most n runes, with an ellipsis (as ui's menu
// does).
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Window shows an agent's last change and undoes it when the owner
// confirms with "Undo it". Its methods run on the UI goroutine.
type Window struct {
	h       Host
	undoer  Undoer
	win     fyne.Window
	head    *widget.Label
	files   *widget.Label
	status  *widget.Label
	confirm *widget.Button
	cancel  *widget.Button
	client  string
	event   int64 // the change shown; 0 while loading or when there is none
}

// New makes the window, not yet shown; onClosed runs (on the UI
// goroutine) once it is closed.
func New(h Host, u Undoer, onClosed func()) *Window {
	w := &Window{h: h, undoer: u, win: h.App().NewWindow(undoTitle)}
	w.head = widget.NewLabel("")
	w.head.Wrapping = fyne.TextWrapWord
	w.files = widget.NewLabel("")
	w.files.Wrapping = fyne.TextWrapWord
	w.status = widget.NewLabel("")
	w.status.Wrapping = fyne.TextWrapWord
	w.confirm = widget.NewButton(labelUndo, w.apply)
	w.confirm.Importance = widget.DangerImportance
	w.cancel = widget.NewButton(labelCancel, func() { w.win.Close() })
	buttons := container.NewHBox(w.cancel, w.confirm)
	// The confirm area sits on an opaque rectangle of the theme's
	// background, so the list of files scrolled behind it never shows
	// through (issue 27: the owner saw rows through it in the real tray).
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameBackground))
	bottom := container.NewStack(bg, container.NewVBox(w.status, buttons))
	w.win.SetContent(container.NewBorder(nil, bottom, nil, nil, container.NewVScroll(container.NewVBox(w.head, w.files))))
	w.win.Resize(Size) // covers the Recent activity window it came from
	w.win.SetOnClosed(onClosed)
	return w
}

// Load shows client's last change, asking the Undoer off the UI
// goroutine, and brings the window to the front.
func (w *Window) Load(client string) {
	w.client, w.event = client, 0
	w.head.SetText("Looking at the last change by " + visible.Line(client) + "…")
	w.files.SetText("")
	w.status.SetText("")
	w.confirm.Show()
	w.confirm.Disable()
	w.cancel.SetText(labelCancel)
	w.win.Show()
	w.h.Spawn(func() {
		c, err := w.undoer.LastChange(w.h.Context(), client)
		w.h.Do(func() {
			if w.client != client {
				return // another agent was chosen meanwhile
			}
			if err != nil {
				w.head.SetText(err.Error())
				w.confirm.Hide()
				w.cancel.SetText(labelClose)
				return
			}
			head, files := lastChangeText(c)
			w.head.SetText(head)
			w.files.SetText(files)
			w.event = c.EventID
			if c.Conflicts() == 0 && len(c.Files) > 0 {
				w.confirm.Enable()
			}
			w.win.Content().Refresh() // the wrapped lines' heights changed
		})
	})
}

// apply undoes the shown change.
func (w *Window) apply() {
	id := w.event
	if id == 0 {
		return
	}
	w.confirm.Disable()
	w.status.SetText("Undoing…")
	w.h.Spawn(func() {
		msg, err := w.undoer.Undo(w.h.Context(), id)
		w.h.Do(func() {
			if w.event != id {
				return
			}
			if err != nil {
				w.status.SetText("Nothing was undone: " + err.Error())
			} else {
				w.status.SetText(msg)
			}
			w.event = 0
			w.confirm.Hide()
			w.cancel.SetText(labelClose)
		})
	})
}

// Focus brings the window to the front.
func (w *Window) Focus() { w.win.RequestFocus() }
