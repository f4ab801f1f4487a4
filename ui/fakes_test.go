package ui

import (
	"context"
	"path"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"corral/core/audit"
	"corral/core/policy"
	"corral/core/testkit/fakeclock"
)

// uiLoop stands in for Fyne's UI goroutine: posted functions wait until
// the test runs them, so the tests see exactly what the broker's calls
// hand over, and when.
type uiLoop struct{ ch chan func() }

func newUILoop() *uiLoop { return &uiLoop{ch: make(chan func(), 1024)} }

func (l *uiLoop) post(f func()) { l.ch <- f }

// flush runs what is queued, including what those functions queue.
func (l *uiLoop) flush() {
	for {
		select {
		case f := <-l.ch:
			f()
		default:
			return
		}
	}
}

// await runs the next posted function, waiting for it up to 5 s.
func (l *uiLoop) await(t *testing.T) {
	t.Helper()
	select {
	case f := <-l.ch:
		f()
	case <-time.After(5 * time.Second):
		t.Fatal("nothing was posted to the UI goroutine")
	}
}

// fakeBroker records the tray's subscription and answers.
type fakeBroker struct {
	surface      policy.Surface
	answers      []policy.Answer
	err          error
	unsubscribed bool
}

func (b *fakeBroker) Subscribe(s policy.Surface) func() {
	b.surface = s
	return func() { b.unsubscribed = true }
}

func (b *fakeBroker) Respond(ctx context.Context, a policy.Answer) error {
	b.answers = append(b.answers, a)
	return b.err
}

type fakeControl struct {
	mu       sync.Mutex
	status   Status
	pauses   []bool
	logins   int
	settings Settings
}

func (c *fakeControl) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *fakeControl) SetPaused(ctx context.Context, paused bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pauses = append(c.pauses, paused)
	c.status.Paused = paused
	return nil
}

func (c *fakeControl) LoginURL() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logins++
	return "http://127.0.0.1:8765/login?code=code" + string(rune('0'+c.logins)), nil
}

func (c *fakeControl) Settings() Settings { return c.settings }

// fakeIcon records what the tray shows in the system tray.
type fakeIcon struct {
	menus   [][]menuItem
	choose  func(menuItem)
	badges  []badge
	tooltip string
	closed  bool
}

func (i *fakeIcon) SetMenu(items []menuItem, choose func(menuItem)) {
	i.menus = append(i.menus, items)
	i.choose = choose
}
func (i *fakeIcon) SetBadge(b badge)    { i.badges = append(i.badges, b) }
func (i *fakeIcon) SetTooltip(s string) { i.tooltip = s }
func (i *fakeIcon) Close()              { i.closed = true }

func (i *fakeIcon) menu() []menuItem { return i.menus[len(i.menus)-1] }
func (i *fakeIcon) badge() badge     { return i.badges[len(i.badges)-1] }

// item finds a menu item by label, submenus included.
func (i *fakeIcon) item(t *testing.T, label string) menuItem {
	t.Helper()
	var find func([]menuItem) (menuItem, bool)
	find = func(items []menuItem) (menuItem, bool) {
		for _, it := range items {
			if it.Label == label && !it.Hidden {
				return it, true
			}
			if c, ok := find(it.Children); ok {
				return c, true
			}
		}
		return menuItem{}, false
	}
	it, ok := find(i.menu())
	if !ok {
		t.Fatalf("no menu item %q in %+v", label, i.menu())
	}
	return it
}

type fakeEvents struct {
	page audit.Page
	ch   chan audit.Event
}

func (e *fakeEvents) Query(ctx context.Context, f audit.Filter) (audit.Page, error) {
	return e.page, nil
}

func (e *fakeEvents) Subscribe() (<-chan audit.Event, func()) { return e.ch, func() {} }

type fakeAutostart struct {
	on  bool
	err error
}

func (a *fakeAutostart) Enabled() bool { return a.on }
func (a *fakeAutostart) SetEnabled(on bool) error {
	if a.err != nil {
		return a.err
	}
	a.on = on
	return nil
}

// harness is a tray on Fyne's test app with every dependency faked.
type harness struct {
	tray    *Tray
	loop    *uiLoop
	clock   *fakeclock.Clock
	broker  *fakeBroker
	control *fakeControl
	icon    *fakeIcon
	opened  []string
	openMu  sync.Mutex
}

func newHarness(t *testing.T, opt ...func(*Config)) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	h := &harness{
		loop: newUILoop(), clock: fakeclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)), broker: &fakeBroker{}, icon: &fakeIcon{},
		control: &fakeControl{status: Status{Listen: "http://127.0.0.1:8765", Agents: 2}},
	}
	cfg := Config{
		Broker: h.broker, Control: h.control, Clock: h.clock.Now, AfterFunc: h.clock.AfterFunc, Notify: true,
		Open: func(s string) error {
			h.openMu.Lock()
			defer h.openMu.Unlock()
			h.opened = append(h.opened, s)
			return nil
		},
	}
	for _, o := range opt {
		o(&cfg)
	}
	h.tray = newTray(a, h.icon, cfg)
	h.tray.post = h.loop.post
	h.tray.spawn = func(f func()) { f() }
	h.tray.Start(t.Context())
	// No flush here: with Events set, Start's goroutine posts the first
	// load whenever it gets there, and the tests await it themselves (a
	// flush could take it first and leave their await waiting).
	t.Cleanup(h.tray.Stop)
	return h
}

// request tells the tray about a new approval as the broker would, and
// lets the UI goroutine handle it.
func (h *harness) request(a policy.Approval) {
	h.tray.ApprovalRequested(a)
	h.loop.flush()
}

func (h *harness) resolve(id string) {
	h.tray.ApprovalResolved(id, policy.DenyOnce, "browser")
	h.loop.flush()
}

// advance moves the clock and runs what its timers posted.
func (h *harness) advance(d time.Duration) {
	h.clock.Advance(d)
	h.loop.flush()
}

func (h *harness) lastOpened() string {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if len(h.opened) == 0 {
		return ""
	}
	return h.opened[len(h.opened)-1]
}

// approval makes a pending file approval requested at the clock's time
// plus age.
func (h *harness) approval(id, target string, age time.Duration) policy.Approval {
	at := h.clock.Now().Add(age)
	return policy.Approval{
		ID: id, Client: "alice-agent", User: "alice", Access: policy.Read, Target: target, Folder: path.Dir(target),
		Reason: "to summarise it", RequestedAt: at, ExpiresAt: at.Add(2 * time.Minute),
		Description: policy.Describe("alice-agent", policy.Read, target),
	}
}
