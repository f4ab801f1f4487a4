// Package ui is Corral's desktop front end in Fyne: the tray icon and its
// menu, the approval dialog, the Recent activity and Settings windows,
// and the "Pair a phone" and undo windows, which live in ui/pairwin and
// ui/undowin and which ui opens through a Host it implements (no package
// under ui imports ui). It is one more surface of the approvals broker,
// next to the browser and the phone, and it decides nothing: it shows
// what the broker and the running Corral report, and sends the owner's
// answers back. The approval dialog and its queue stay in ui: they are
// the tray's policy.Surface, and their tests drive them through the
// broker's calls.
//
// Guaranteed: the broker is never blocked — Surface calls only hand work
// to the UI goroutine (fyne.Do); one window shows pending approvals, the
// oldest first, with "1 of 3" when several wait; its buttons ignore input
// for GuardDelay (750 ms) after an approval appears; an approval answered
// elsewhere leaves the window at once; one-time-only approvals offer only
// "Allow once" and "Deny"; the answers carry By "tray".
//
// Not guaranteed: that the owner sees anything. Without a StatusNotifier
// host there is no tray icon (dialogs still open), and without a session
// bus there are neither tray nor notifications. Whether a new dialog takes
// keyboard focus is the window manager's call: the window asks not to
// (see Run). The tray polls Status every StatusEvery, so a change made
// elsewhere may take that long to show in the menu. While no window is on
// screen, Fyne's event loop is parked (idler), so an idle tray costs no
// CPU; the poll wakes it only when the status changed.
//
// The logic lives in small plain types and functions (prompt, queue,
// menuModel, activity) that tests drive directly; the widgets only
// render them.
package ui

import (
	"context"
	"log/slog"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"corral/core/audit"
	"corral/core/policy"
	"corral/ui/internal/quietlocale"
	"corral/ui/pairwin"
	"corral/ui/undowin"
)

// Fyne's init functions have run by now (ui imports Fyne).
func init() { quietlocale.Done() }

// StatusEvery is how often the tray refreshes its status line and badge.
const StatusEvery = 2 * time.Second

// Broker is the approvals broker as the tray uses it; *policy.Policy is
// one. The tray subscribes as a surface and answers through Respond.
type Broker interface {
	Subscribe(s policy.Surface) (cancel func())
	Respond(ctx context.Context, a policy.Answer) error
}

// Control is what the tray reads and changes of the running Corral
// besides approvals. It exists so that ui needs nothing of app/. A
// Control that is also a pairwin.Pairer gets "Pair a phone…" in the menu.
type Control interface {
	Status() Status
	SetPaused(ctx context.Context, paused bool) error
	// LoginURL is a fresh one-time dashboard login.
	LoginURL() (string, error)
	Settings() Settings
}

// EventLog is the audit log as Recent activity reads it: the last events
// and the live stream of new ones. The store is one.
type EventLog interface {
	Query(ctx context.Context, f audit.Filter) (audit.Page, error)
	Subscribe() (events <-chan audit.Event, cancel func())
}

// Icons are the PNG images of the app and of the tray's three states.
type Icons struct {
	App, Tray, Pending, Paused []byte
}

// Config holds the tray's dependencies.
type Config struct {
	Broker    Broker    // required
	Control   Control   // required
	Events    EventLog  // feeds Recent activity; nil leaves that window shut
	Autostart Autostart // nil: Settings shows no autostart toggle
	Icons     Icons
	// Open shows a URL or a file in the desktop's default application;
	// nil: the Fyne app's OpenURL (Run sets xdg-open).
	Open func(target string) error
	// Notify sends a desktop notification with each new request (Run
	// sets it when the session bus has a notification service).
	Notify bool
	// NotifyOff reports that the owner turned desktop notifications off
	// in the settings (asked each time, so a change applies at once);
	// nil: never.
	NotifyOff func() bool
	Clock     func() time.Time // nil: time.Now
	// AfterFunc calls f after d on its own goroutine unless stopped
	// first; nil: time.AfterFunc. Tests pass a clock moved by hand.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	Logger    *slog.Logger
}

// Tray is Corral's desktop front end. Its methods other than the Surface
// ones run on the UI goroutine.
type Tray struct {
	cfg       Config
	app       fyne.App
	icon      trayIcon // nil: no tray icon, dialogs only
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) (stop func() bool)
	log       *slog.Logger
	ctx       context.Context

	// post runs f on the UI goroutine without waiting (fyne.Do); spawn
	// runs blocking work off it (go f()). Tests replace both.
	post  func(f func())
	spawn func(f func())
	// raise shows the approval window; Run makes it ask not to take focus.
	raise func(w fyne.Window)
	// idle parks the UI loop while no window is on screen; nil (tests):
	// never.
	idle *idler

	queue    queue
	dialog   *approvalDialog // nil until the first approval; hidden, not closed, after
	keeper   fyne.Window     // never shown: Fyne quits when its last window closes
	activity activity
	actErr   error // the last failure to read the audit log
	actWin   *activityWindow
	setWin   *settingsWindow
	pairer   pairwin.Pairer // nil: the Control cannot pair, the menu does not offer it
	pairWin  *pairwin.Window
	undoer   undowin.Undoer // nil: the Control cannot undo, Recent activity does not offer it
	undoWin  *undowin.Window

	status    Status
	lastMenu  []menuItem
	lastBadge badge
	lastTip   string

	mu       sync.Mutex // guards stops
	stops    []func()
	stopped  atomic.Bool
	stopOnce sync.Once
}

var _ policy.Surface = (*Tray)(nil)

// newTray builds the tray on a Fyne app; icon is the system tray icon,
// nil for none. Call Start on the UI goroutine once the app runs.
func newTray(a fyne.App, icon trayIcon, cfg Config) *Tray {
	t := &Tray{
		cfg: cfg, app: a, icon: icon, now: cfg.Clock, afterFunc: cfg.AfterFunc, log: cfg.Logger,
		post:      fyne.Do,
		spawn:     func(f func()) { go f() },
		raise:     func(w fyne.Window) { w.Show() },
		lastBadge: -1,
	}
	if p, ok := cfg.Control.(pairwin.Pairer); ok {
		t.pairer = p
	}
	if u, ok := cfg.Control.(undowin.Undoer); ok {
		t.undoer = u
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.afterFunc == nil {
		t.afterFunc = realAfterFunc
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if len(cfg.Icons.App) > 0 {
		a.SetIcon(fyne.NewStaticResource("corral.png", cfg.Icons.App))
	}
	return t
}

// Start subscribes to the broker and the audit log and shows the tray.
// ctx bounds the tray's calls into Corral.
func (t *Tray) Start(ctx context.Context) {
	t.ctx = ctx
	t.keeper = t.app.NewWindow("Corral")
	t.refresh()
	t.addStop(t.cfg.Broker.Subscribe(t))
	if t.cfg.Events != nil {
		t.followEvents()
	}
	t.pollStatus()
	defer t.settle()
	if fr, ok := t.cfg.Control.(FirstRunner); ok && t.notify() && fr.FirstRun() {
		n := fyne.NewNotification("Corral: connect your first agent", firstRunNote)
		t.spawn(func() { t.app.SendNotification(n) })
	}
}

// Stop unsubscribes; after it the tray ignores the broker and the audit
// log. Safe to call more than once and from any goroutine.
func (t *Tray) Stop() {
	t.stopOnce.Do(func() {
		t.stopped.Store(true)
		t.mu.Lock()
		stops := t.stops
		t.stops = nil
		t.mu.Unlock()
		for _, s := range stops {
			s()
		}
		if t.idle != nil {
			t.idle.stop()
		}
		if t.icon != nil {
			t.icon.Close()
		}
	})
}

func (t *Tray) addStop(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		f()
		return
	}
	t.stops = append(t.stops, f)
}

// do runs f on the UI goroutine unless the tray has stopped by then.
//
// Once Fyne's loop has ended, fyne.Do runs f at once on the caller's
// goroutine, where OpenGL calls panic. Stop comes first on every way out
// (Quit in the menu, ctx ending on a signal), so f is skipped; should a
// signal's Stop lose that race, a panic in f after Stop is swallowed: the
// process is on its way out anyway.
func (t *Tray) do(f func()) {
	if t.idle != nil {
		t.idle.posting()
	}
	t.post(func() {
		if t.idle != nil {
			t.idle.ran()
		}
		if t.stopped.Load() {
			return
		}
		defer t.settle()
		defer func() {
			if v := recover(); v != nil {
				if !t.stopped.Load() {
					panic(v)
				}
			}
		}()
		f()
	})
}

// settle parks the UI loop when no window is on screen (see idler).
// Call it on the UI goroutine after anything that may close a window.
func (t *Tray) settle() {
	if t.idle == nil || t.onScreen() || !t.idle.schedule() {
		return
	}
	t.post(t.idle.park)
}

// onScreen reports whether one of the tray's windows is shown.
func (t *Tray) onScreen() bool {
	return (t.dialog != nil && t.dialog.visible) || t.actWin != nil || t.setWin != nil ||
		(t.pairWin != nil && t.pairWin.Open()) || t.undoWin != nil
}

// ApprovalRequested implements policy.Surface.
func (t *Tray) ApprovalRequested(a policy.Approval) {
	t.do(func() { t.requested(a) })
}

// ApprovalResolved implements policy.Surface.
func (t *Tray) ApprovalResolved(id string, d policy.Decision, by string) {
	t.do(func() { t.resolved(id) })
}

func (t *Tray) requested(a policy.Approval) {
	if !t.queue.add(a) {
		return
	}
	t.syncDialog()
	t.refresh()
	if t.notify() {
		n := fyne.NewNotification("Corral: an agent is asking", prompt{a: a}.notification())
		t.spawn(func() { t.app.SendNotification(n) })
	}
}

func (t *Tray) resolved(id string) {
	if t.queue.index(id) < 0 {
		return
	}
	t.queue.remove(id)
	t.syncDialog()
	t.refresh()
}

// syncDialog shows the queue's current approval, opening the window if
// needed, or hides the window when nothing is pending.
func (t *Tray) syncDialog() {
	if t.queue.len() == 0 {
		t.dismissDialog()
		return
	}
	if t.dialog == nil {
		t.dialog = newApprovalDialog(t)
	}
	t.dialog.sync()
}

// dismissDialog hides the window; what is pending stays pending and
// comes back with the next request or from the tray menu.
func (t *Tray) dismissDialog() {
	if t.dialog != nil {
		t.dialog.hide()
	}
	t.settle()
}

// showApproval puts id on screen (from the tray menu).
func (t *Tray) showApproval(id string) {
	if !t.queue.choose(id) {
		return
	}
	t.syncDialog()
	// The owner asked for it from the menu: here taking focus is right.
	t.dialog.win.RequestFocus()
}

// respond sends an answer off the UI goroutine; a failure comes back to
// the dialog. Success needs no handling: the broker's ApprovalResolved
// takes the approval off the screen.
func (t *Tray) respond(ans policy.Answer) {
	t.spawn(func() {
		err := t.cfg.Broker.Respond(t.ctx, ans)
		if err == nil {
			return
		}
		t.log.Warn("tray answer", "req_id", ans.ID, "decision", ans.Decision, "err", err)
		t.do(func() {
			if t.dialog != nil {
				t.dialog.failed(ans.ID, err)
			}
		})
	})
}

// refresh brings the menu, the tooltip and the badge up to date,
// touching the system tray only when something changed.
func (t *Tray) refresh() {
	t.status = t.cfg.Control.Status()
	items := menuModel(t.status, t.queue.list(), t.pairer != nil)
	if t.icon == nil {
		t.lastMenu = items
		return
	}
	if !reflect.DeepEqual(items, t.lastMenu) {
		t.lastMenu = items
		t.icon.SetMenu(items, func(it menuItem) { t.do(func() { t.choose(it) }) })
	}
	if tip := "Corral: " + statusLine(t.status); tip != t.lastTip {
		t.lastTip = tip
		t.icon.SetTooltip(tip)
	}
	if b := badgeFor(t.status, t.queue.len()); b != t.lastBadge {
		t.lastBadge = b
		t.icon.SetBadge(b)
	}
}

// pollStatus reads Status every StatusEvery off the UI goroutine and
// wakes it only when the status changed, so an idle tray stays idle.
func (t *Tray) pollStatus() {
	var last Status
	var next func()
	next = func() {
		t.afterFunc(StatusEvery, func() {
			if t.stopped.Load() {
				return
			}
			if st := t.cfg.Control.Status(); st != last {
				last = st
				t.do(t.refresh)
			}
			next()
		})
	}
	next()
}

// choose carries out a menu item.
func (t *Tray) choose(it menuItem) {
	switch it.Action {
	case actApproval:
		t.showApproval(it.ID)
	case actDashboard:
		t.openDashboard()
	case actConnect:
		t.openLoginAt("agents")
	case actPause, actResume:
		paused := it.Action == actPause
		t.spawn(func() {
			if err := t.cfg.Control.SetPaused(t.ctx, paused); err != nil {
				t.log.Error("tray pause", "err", err)
			}
			t.do(t.refresh)
		})
	case actActivity:
		t.showActivity()
	case actSettings:
		if t.setWin == nil {
			t.setWin = newSettingsWindow(t)
			t.setWin.win.SetOnClosed(func() { t.setWin = nil; t.settle() })
		}
		t.setWin.show()
	case actPair:
		t.showPairing()
	case actQuit:
		t.Stop()
		t.app.Quit()
	}
}

// openDashboard opens a fresh one-time login in the browser.
func (t *Tray) openDashboard() { t.openLogin("") }

// openEvent opens the dashboard at one event of the audit log.
func (t *Tray) openEvent(id int64) { t.openLogin(strconv.FormatInt(id, 10)) }

func (t *Tray) openLogin(event string) {
	login, err := t.cfg.Control.LoginURL()
	if err != nil {
		t.log.Error("dashboard login", "err", err)
		return
	}
	if event != "" {
		login = eventURL(login, event)
	}
	t.open(login)
}

// openLoginAt opens the dashboard at a view ("agents").
func (t *Tray) openLoginAt(view string) {
	login, err := t.cfg.Control.LoginURL()
	if err != nil {
		t.log.Error("dashboard login", "err", err)
		return
	}
	if i := strings.IndexByte(login, '#'); i >= 0 {
		login = login[:i]
	}
	t.open(login + "#" + view)
}

// FirstRunner is a Control that can tell whether no agent has worked yet;
// the tray's first notification then points to "Connect an agent…".
type FirstRunner interface {
	FirstRun() bool
}

// firstRunNote is the notification a new owner gets when the tray starts.
const firstRunNote = "Corral is running. No agent is connected yet: choose “Connect an agent…” in this tray menu (or the Agents page of the dashboard) to connect your first one in a minute."

// open shows target (a URL or a file) in the desktop's default
// application. Failures are logged without the target: a login URL is a
// credential for two minutes.
func (t *Tray) open(target string) {
	open := t.cfg.Open
	if open == nil {
		open = func(s string) error { return t.app.OpenURL(targetURL(s)) }
	}
	t.spawn(func() {
		if err := open(target); err != nil {
			t.log.Error("open in the desktop", "err", err)
		}
	})
}

// targetURL is s as a URL: a local path becomes a file:// URL.
func targetURL(s string) *url.URL {
	if strings.HasPrefix(s, "/") {
		return &url.URL{Scheme: "file", Path: s}
	}
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{Scheme: "file", Path: s}
	}
	return u
}

// showPairing opens the pairing window with a fresh code, or brings the
// open one to the front as it is (its "New code" asks for another).
func (t *Tray) showPairing() {
	if t.pairer == nil {
		return
	}
	if t.pairWin != nil {
		t.pairWin.Focus()
		return
	}
	var w *pairwin.Window
	w = pairwin.New(trayHost{t}, t.pairer, func() {
		if t.pairWin == w {
			t.pairWin = nil
		}
		t.settle()
	})
	t.pairWin = w
	w.Show()
}

func (t *Tray) showActivity() {
	if t.cfg.Events == nil {
		return
	}
	if t.actWin == nil {
		t.actWin = newActivityWindow(t)
		t.actWin.win.SetOnClosed(func() { t.actWin = nil; t.settle() })
	}
	t.actWin.show()
}

// followEvents loads the last events and follows new ones. A subscriber
// that falls behind gets a closed channel: it reloads and subscribes
// again.
func (t *Tray) followEvents() {
	ch, cancel := t.cfg.Events.Subscribe()
	t.addStop(cancel)
	go func() {
		page, err := t.cfg.Events.Query(t.ctx, audit.Filter{Limit: activityMax})
		t.do(func() {
			t.actErr = err
			if err != nil {
				t.log.Warn("recent activity", "err", err)
				t.activityChanged()
				return
			}
			t.activity.load(page.Events)
			t.activityChanged()
		})
		for e := range ch {
			t.do(func() {
				if t.activity.add(e) {
					t.activityChanged()
				}
			})
		}
		if t.ctx.Err() != nil || t.stopped.Load() {
			return
		}
		// Fell behind, or the log closed: try again in a while.
		t.afterFunc(time.Second, func() { t.do(t.followEvents) })
	}()
}

func (t *Tray) activityChanged() {
	if t.actWin != nil {
		t.actWin.refresh()
	}
}

// notify reports whether a desktop notification may be sent now.
func (t *Tray) notify() bool {
	return t.cfg.Notify && (t.cfg.NotifyOff == nil || !t.cfg.NotifyOff())
}
