package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"corral/core/audit"
	"corral/core/policy"
	"corral/core/testkit/auditmem"
	"corral/core/testkit/fakeclock"
	"corral/ui/internal/shots"
	"image"
)

// tableLabels are the labels policy's one table gives a's answers.
func tableLabels(a policy.Approval) (out []string) {
	for _, c := range a.Choices() {
		out = append(out, c.Label)
	}
	return out
}

// visibleButtons lists the dialog's shown buttons, in the order a reader
// meets them.
func visibleButtons(d *approvalDialog) (out []string) {
	for _, c := range policy.AllChoices() {
		if b := d.buttons[c.Decision]; b.Visible() {
			out = append(out, b.Text)
		}
	}
	return out
}

func anyEnabled(d *approvalDialog) bool {
	for _, b := range d.buttons {
		if b.Visible() && !b.Disabled() {
			return true
		}
	}
	return false
}

// dialogShown reports whether the approval window is on screen.
func (t *Tray) dialogShown() bool { return t.dialog != nil && t.dialog.visible }

// dialogWindows counts the approval windows Fyne has, shown or hidden.
func dialogWindows(t *testing.T) (n int) {
	for _, w := range fyne.CurrentApp().Driver().AllWindows() {
		if w.Title() == dialogTitle {
			n++
		}
	}
	return n
}

func TestDialogShowsTheRequest(t *testing.T) {
	h := newHarness(t)
	a := h.approval("ap_1", "/home/alice/notes/todo.txt", 0)
	test.AssertNotificationSent(t, fyne.NewNotification("Corral: an agent is asking", "alice-agent wants to read /home/alice/notes/todo.txt"), func() {
		h.request(a)
	})
	d := h.tray.dialog
	if d == nil || !d.visible {
		t.Fatal("no dialog for a pending approval")
	}
	for name, got := range map[string]string{
		"title": d.title.Text, "who": d.who.Text, "access": d.access.Text, "target": d.target.Text, "why": d.why.Text,
	} {
		want := map[string]string{
			"title": "alice-agent wants to read /home/alice/notes/todo.txt", "who": "alice-agent, working in alice’s folder",
			"access": "read", "target": "/home/alice/notes/todo.txt", "why": "to summarise it",
		}[name]
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !strings.Contains(d.countdown.Text, "2:00") {
		t.Errorf("countdown %q", d.countdown.Text)
	}
	h.advance(5 * time.Second)
	if !strings.Contains(d.countdown.Text, "1:55") || d.bar.frac > 0.96 {
		t.Errorf("countdown after 5 s: %q, bar %v", d.countdown.Text, d.bar.frac)
	}
	if got, want := visibleButtons(d), tableLabels(a); !slices.Equal(got, want) {
		t.Errorf("buttons %q, want %q", got, want)
	}
	if !d.options.Visible() || !d.widen.Visible() || d.widen.Text != "Remembered answers cover the whole folder /home/alice/notes" || d.expiry.Selected != "for 7 days" {
		t.Errorf("options: visible %v, widen %v %q, expiry %q", d.options.Visible(), d.widen.Visible(), d.widen.Text, d.expiry.Selected)
	}
	if d.position.Text != "" {
		t.Errorf("position %q with one approval", d.position.Text)
	}
}

func TestDialogOneTimeOnly(t *testing.T) {
	h := newHarness(t)
	a := h.approval("ap_net", "curl https://example.org", 0)
	a.Access, a.OneTimeOnly = policy.Network, true
	h.request(a)
	d := h.tray.dialog
	if got, want := visibleButtons(d), tableLabels(a); !slices.Equal(got, want) || len(got) != 2 {
		t.Errorf("one-time-only buttons %q", got)
	}
	if d.options.Visible() {
		t.Error("folder and expiry options shown for a one-time-only approval")
	}
	h.advance(GuardDelay)
	test.Tap(d.buttons[policy.DenyOnce])
	if len(h.broker.answers) != 1 || h.broker.answers[0] != (policy.Answer{ID: "ap_net", Decision: policy.DenyOnce, By: "tray", Via: "dialog"}) {
		t.Errorf("answers %+v", h.broker.answers)
	}

	// The next approval, a normal one, gets all five buttons back.
	h.resolve("ap_net")
	h.request(h.approval("ap_file", "/etc/hosts", time.Second))
	if got := visibleButtons(h.tray.dialog); len(got) != 5 || got[3] != "Deny" {
		t.Errorf("buttons after a one-time-only approval: %q", got)
	}
}

func TestDialogGuard(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/etc/hosts", 0))
	d := h.tray.dialog
	allow := d.buttons[policy.AllowOnce]
	if anyEnabled(d) {
		t.Fatal("buttons enabled the moment the dialog appeared")
	}
	test.Tap(allow)
	h.advance(100 * time.Millisecond)
	test.Tap(allow)
	// Even a button that is enabled too early (a stale timer, a keyboard
	// path that skips the disabled state) cannot answer inside the guard.
	allow.Enable()
	test.Tap(allow)
	if len(h.broker.answers) != 0 {
		t.Fatalf("answered inside the guard: %+v", h.broker.answers)
	}
	allow.Disable()
	h.advance(GuardDelay - 100*time.Millisecond - time.Millisecond)
	if anyEnabled(d) {
		t.Fatal("buttons enabled 1 ms before the guard ends")
	}
	h.advance(time.Millisecond)
	if !anyEnabled(d) {
		t.Fatal("buttons still disabled after the guard")
	}
	test.Tap(allow)
	test.Tap(allow) // a double click sends one answer
	if len(h.broker.answers) != 1 || h.broker.answers[0].Decision != policy.AllowOnce {
		t.Fatalf("answers %+v", h.broker.answers)
	}
	if anyEnabled(d) {
		t.Error("buttons still enabled while the answer is on its way")
	}
}

func TestDialogDecisions(t *testing.T) {
	week := 7 * 24 * time.Hour
	for _, tt := range []struct {
		d    policy.Decision
		want policy.Answer
	}{
		{policy.AllowOnce, policy.Answer{ID: "ap_1", Decision: policy.AllowOnce, By: "tray", Via: "dialog"}},
		{policy.AllowSession, policy.Answer{ID: "ap_1", Decision: policy.AllowSession, Widen: "folder", By: "tray", Via: "dialog"}},
		{policy.AllowAlways, policy.Answer{ID: "ap_1", Decision: policy.AllowAlways, Widen: "folder", ExpiresIn: week, By: "tray", Via: "dialog"}},
		{policy.DenyOnce, policy.Answer{ID: "ap_1", Decision: policy.DenyOnce, By: "tray", Via: "dialog"}},
		{policy.DenyAlways, policy.Answer{ID: "ap_1", Decision: policy.DenyAlways, Widen: "folder", ExpiresIn: week, By: "tray", Via: "dialog"}},
	} {
		t.Run(string(tt.d), func(t *testing.T) {
			h := newHarness(t)
			h.request(h.approval("ap_1", "/srv/data/report.csv", 0))
			d := h.tray.dialog
			h.advance(time.Second)
			test.Tap(d.widen)
			d.expiry.SetSelected("for 7 days")
			test.Tap(d.buttons[tt.d])
			if len(h.broker.answers) != 1 || h.broker.answers[0] != tt.want {
				t.Errorf("answers %+v, want %+v", h.broker.answers, tt.want)
			}
		})
	}
}

func TestDialogAnswerFails(t *testing.T) {
	h := newHarness(t)
	h.broker.err = errors.New("Corral could not save the rule.")
	h.request(h.approval("ap_1", "/etc/hosts", 0))
	h.advance(time.Second)
	d := h.tray.dialog
	test.Tap(d.buttons[policy.AllowAlways])
	h.loop.flush()
	if !d.status.Visible() || d.status.Text != "Corral could not save the rule." || !anyEnabled(d) {
		t.Errorf("after a failed answer: status %v %q, buttons enabled %v", d.status.Visible(), d.status.Text, anyEnabled(d))
	}
}

func TestDialogQueue(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/etc/a", 0))
	h.advance(time.Second)
	h.request(h.approval("ap_2", "/etc/b", 0))
	h.request(h.approval("ap_3", "/etc/c", 0))
	d := h.tray.dialog
	if n := dialogWindows(t); n != 1 {
		t.Fatalf("%d approval windows for 3 approvals", n)
	}
	if d.target.Text != "/etc/a" || d.position.Text != "1 of 3" {
		t.Fatalf("shows %q %q, want the oldest, 1 of 3", d.target.Text, d.position.Text)
	}
	if !anyEnabled(d) {
		t.Fatal("new arrivals re-armed the guard of the approval on screen")
	}
	if got := h.icon.item(t, "Approvals pending (3)"); len(got.Children) != 3 {
		t.Fatalf("menu: %+v", got)
	}
	if h.icon.badge() != badgePending {
		t.Errorf("badge %v", h.icon.badge())
	}

	// Answered elsewhere (the browser): the next one replaces it at once,
	// behind a fresh guard.
	h.resolve("ap_1")
	if h.tray.dialog != d || d.target.Text != "/etc/b" || d.position.Text != "1 of 2" {
		t.Fatalf("after ap_1 was answered elsewhere: %q %q", d.target.Text, d.position.Text)
	}
	if anyEnabled(d) {
		t.Fatal("the next approval is answerable before its own guard")
	}
	test.Tap(d.buttons[policy.AllowOnce])
	if len(h.broker.answers) != 0 {
		t.Fatal("answered the next approval with the click meant for the previous one")
	}
	// Resolving one that is not on screen leaves the screen alone.
	h.resolve("ap_3")
	if d.target.Text != "/etc/b" || d.position.Text != "" {
		t.Fatalf("after ap_3: %q %q", d.target.Text, d.position.Text)
	}
	h.resolve("ap_2")
	if h.tray.dialogShown() || dialogWindows(t) != 1 {
		t.Fatal("the dialog stays after the last approval was answered elsewhere")
	}
	if h.icon.item(t, labelNoPending).Label == "" || h.icon.badge() != badgeNone {
		t.Error("menu or badge still show pending approvals")
	}
	h.resolve("ap_unknown") // harmless
}

func TestDialogClosedByOwner(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/etc/a", 0))
	h.tray.dismissDialog() // what the window manager's close button does
	if h.tray.dialogShown() {
		t.Fatal("dialog still there")
	}
	// Still pending: the menu offers it and reopens it.
	it := h.icon.item(t, "alice-agent wants to read /etc/a")
	h.icon.choose(it)
	h.loop.flush()
	if !h.tray.dialogShown() || h.tray.dialog.target.Text != "/etc/a" {
		t.Fatal("choosing the pending approval in the menu did not show it")
	}
	if n := dialogWindows(t); n != 1 {
		t.Errorf("%d approval windows after it was shown again, want the one window reused", n)
	}
}

func TestMenuChoosesApproval(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/etc/a", 0))
	h.request(h.approval("ap_2", "/etc/b", time.Second))
	h.advance(time.Second)
	h.icon.choose(h.icon.item(t, "alice-agent wants to read /etc/b"))
	h.loop.flush()
	d := h.tray.dialog
	if d.target.Text != "/etc/b" || d.position.Text != "2 of 2" || anyEnabled(d) {
		t.Fatalf("chosen from the menu: %q %q enabled %v", d.target.Text, d.position.Text, anyEnabled(d))
	}
}

func TestMenuActions(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Events = &fakeEvents{ch: make(chan audit.Event)}
		c.Autostart = &fakeAutostart{}
	})
	h.loop.await(t) // the activity load
	if got := h.icon.menu()[0]; got.Label != "127.0.0.1:8765 · 2 agents connected · running" || !got.Disabled {
		t.Errorf("status line %+v", got)
	}
	if h.icon.badge() != badgeNone || h.icon.tooltip != "Corral: 127.0.0.1:8765 · 2 agents connected · running" {
		t.Errorf("badge %v tooltip %q", h.icon.badge(), h.icon.tooltip)
	}

	h.icon.choose(h.icon.item(t, labelPause))
	h.loop.flush()
	if !slices.Equal(h.control.pauses, []bool{true}) {
		t.Fatalf("pauses %v", h.control.pauses)
	}
	h.icon.item(t, labelResume)
	if h.icon.badge() != badgePaused || !strings.HasSuffix(h.icon.menu()[0].Label, "· paused") {
		t.Errorf("after pausing: badge %v, status %q", h.icon.badge(), h.icon.menu()[0].Label)
	}
	h.icon.choose(h.icon.item(t, labelResume))
	h.loop.flush()
	if !slices.Equal(h.control.pauses, []bool{true, false}) || h.icon.badge() != badgeNone {
		t.Errorf("after resuming: pauses %v badge %v", h.control.pauses, h.icon.badge())
	}

	h.icon.choose(h.icon.item(t, labelDashboard))
	h.loop.flush()
	if got := h.lastOpened(); got != "http://127.0.0.1:8765/login?code=code1" {
		t.Errorf("dashboard opened %q", got)
	}
	h.icon.choose(h.icon.item(t, labelConnect))
	h.loop.flush()
	if got := h.lastOpened(); !strings.HasSuffix(got, "#agents") || !strings.Contains(got, "/login?code=") {
		t.Errorf("Connect an agent… opened %q, want a fresh login at #agents", got)
	}

	// The status line follows the daemon by polling.
	h.control.mu.Lock()
	h.control.status.Agents = 1
	h.control.mu.Unlock()
	menus := len(h.icon.menus)
	h.advance(StatusEvery)
	if h.icon.menu()[0].Label != "127.0.0.1:8765 · 1 agent connected · running" {
		t.Errorf("status after polling %q", h.icon.menu()[0].Label)
	}
	h.advance(StatusEvery)
	if len(h.icon.menus) != menus+1 {
		t.Errorf("an unchanged menu was sent to the tray again (%d → %d)", menus, len(h.icon.menus))
	}

	h.icon.choose(h.icon.item(t, labelActivity))
	h.loop.flush()
	if h.tray.actWin == nil || h.tray.actWin.win.Title() != "Corral — recent activity" {
		t.Error("no activity window")
	}
	h.icon.choose(h.icon.item(t, labelSettings))
	h.loop.flush()
	if h.tray.setWin == nil {
		t.Error("no settings window")
	}
	h.icon.choose(h.icon.item(t, labelQuit))
	h.loop.flush()
	if !h.broker.unsubscribed || !h.icon.closed {
		t.Errorf("quit: unsubscribed %v, icon closed %v", h.broker.unsubscribed, h.icon.closed)
	}
}

func TestStoppedTrayIgnoresTheBroker(t *testing.T) {
	h := newHarness(t)
	h.tray.Stop()
	h.tray.Stop()
	h.request(h.approval("ap_1", "/etc/a", 0))
	if h.tray.dialogShown() || h.tray.queue.len() != 0 {
		t.Fatal("a stopped tray showed an approval")
	}
}

func TestSurfaceDoesNotBlock(t *testing.T) {
	h := newHarness(t)
	// Nobody runs the UI goroutine here: the broker's calls must return
	// anyway, and the work waits for the UI goroutine.
	done := make(chan struct{})
	go func() {
		for i := range 100 {
			h.tray.ApprovalRequested(policy.Approval{ID: "ap_" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
			h.tray.ApprovalResolved("ap_x", policy.DenyOnce, "timeout")
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the surface blocked the broker")
	}
	if h.tray.queue.len() != 0 {
		t.Fatal("UI state changed off the UI goroutine")
	}
	h.loop.flush()
	if h.tray.queue.len() != 100 {
		t.Fatalf("queue %d after the UI goroutine ran", h.tray.queue.len())
	}
}

func TestActivityWindow(t *testing.T) {
	ev := func(id int64, op string) audit.Event {
		return audit.Event{ID: id, Time: time.Now(), Client: "alice-agent", Op: op, Target: "/tmp/x", Decision: audit.Allow, DecidedBy: audit.ByScope}
	}
	events := &fakeEvents{page: audit.Page{Events: []audit.Event{ev(2, "file.write"), ev(1, "file.read")}}, ch: make(chan audit.Event)}
	h := newHarness(t, func(c *Config) { c.Events = events })
	h.loop.await(t)
	h.tray.showActivity()
	w := h.tray.actWin
	if w.list.Length() != 2 {
		t.Fatalf("rows %d", w.list.Length())
	}
	events.ch <- ev(3, "file.delete")
	h.loop.await(t)
	if w.list.Length() != 3 || h.tray.activity.events[0].ID != 3 {
		t.Fatalf("live event not shown: %d rows", w.list.Length())
	}
	w.list.Select(0)
	if got := h.lastOpened(); got != "http://127.0.0.1:8765/login?code=code1#event=3" {
		t.Errorf("row opened %q", got)
	}
	w.win.Close()
	if h.tray.actWin != nil {
		t.Error("closed activity window still referenced")
	}
}

func TestSettingsWindow(t *testing.T) {
	auto := &fakeAutostart{}
	h := newHarness(t, func(c *Config) { c.Autostart = auto })
	h.control.settings = Settings{ConfigPath: "/home/alice/.config/corral/config.toml", Values: []Setting{{"Listening on", "http://127.0.0.1:8765"}, {"Strict", "on"}}}
	h.tray.choose(menuItem{Action: actSettings})
	w := h.tray.setWin
	if w.path.Text != "/home/alice/.config/corral/config.toml" || len(w.form.Items) != 2 || w.form.Items[1].Text != "Strict" {
		t.Fatalf("settings window: path %q, %d items", w.path.Text, len(w.form.Items))
	}
	if w.form.Items[0].Widget.(*widget.Label).Text != "http://127.0.0.1:8765" {
		t.Error("value not shown")
	}
	test.Tap(w.open)
	if got := h.lastOpened(); got != "/home/alice/.config/corral/config.toml" {
		t.Errorf("opened %q", got)
	}
	// Change settings… opens the dashboard's Settings page.
	test.Tap(w.change)
	h.loop.flush()
	if got := h.lastOpened(); !strings.HasSuffix(got, "#settings") || !strings.Contains(got, "/login?code=") {
		t.Errorf("Change settings… opened %q, want a dashboard login at #settings", got)
	}
	shots.Save(t, "tray-settings", func() image.Image {
		w.win.Resize(fyne.NewSize(700, 640))
		return w.win.Canvas().Capture()
	})
	if w.autostart.Checked || w.autostart.Text != labelAutostart {
		t.Fatal("autostart shown as on")
	}
	test.Tap(w.autostart)
	if !auto.on || !strings.Contains(w.status.Text, "will start") {
		t.Errorf("autostart on: %v %q", auto.on, w.status.Text)
	}
	auto.err = errors.New("read-only file system")
	test.Tap(w.autostart)
	if !auto.on || !w.autostart.Checked || !strings.Contains(w.status.Text, "read-only") {
		t.Errorf("failed toggle: on %v checked %v status %q", auto.on, w.autostart.Checked, w.status.Text)
	}
}

// TestWithRealPolicy runs the dialog against the real broker: the agent's
// call blocks in Check until the owner taps, and "Allow always" with the
// folder option makes a rule that answers the next request.
func TestWithRealPolicy(t *testing.T) {
	rules := &memRules{}
	clock := fakeclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	pol, err := policy.New(t.Context(), policy.Config{Rules: rules, Audit: &auditmem.Log{}, Timeout: time.Minute, Strict: true, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	pol.SetLevelOf(func(client string) policy.Level { return policy.LevelTrusted }) // as the agent directory tells it
	a := test.NewTempApp(t)
	loop := newUILoop()
	tr := newTray(a, nil, Config{Broker: pol, Control: &fakeControl{}, Clock: clock.Now, AfterFunc: clock.AfterFunc})
	tr.post = loop.post
	tr.spawn = func(f func()) { f() }
	tr.Start(t.Context())
	defer tr.Stop()

	req := policy.Request{Client: "alice-agent", Scope: "alice", Access: policy.Read, Target: "/srv/data/a.csv"}
	out := make(chan policy.Outcome, 1)
	go func() {
		o, err := pol.Check(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		out <- o
	}()
	loop.await(t) // ApprovalRequested reached the UI goroutine
	d := tr.dialog
	if d == nil || d.target.Text != "/srv/data/a.csv" {
		t.Fatal("no dialog for the request")
	}
	// The agent's trust level is shown, as on the dashboard's card (issue 26.3).
	if d.who.Text != "alice-agent (Trusted in its folder), working in alice’s folder" {
		t.Errorf("who %q lacks the agent's trust level", d.who.Text)
	}
	clock.Advance(GuardDelay)
	loop.flush()
	test.Tap(d.widen)
	test.Tap(d.buttons[policy.AllowAlways])
	select {
	case o := <-out:
		if !o.Allowed || o.Decision != policy.AllowAlways || o.Rule == nil || o.Rule.Target != "/srv/data" || o.Rule.CreatedBy != "tray" || o.Via != "dialog" {
			t.Fatalf("outcome %+v rule %+v", o, o.Rule)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's call did not return")
	}
	loop.flush()
	if tr.dialogShown() {
		t.Error("dialog still open after the answer")
	}
	o, err := pol.Check(t.Context(), policy.Request{Client: "alice-agent", Scope: "alice", Access: policy.Read, Target: "/srv/data/b.csv"})
	if err != nil || !o.Allowed || o.By != audit.ByRule {
		t.Errorf("next request in the folder: %+v %v", o, err)
	}
	if len(rules.saved) != 1 {
		t.Errorf("rules saved: %+v", rules.saved)
	}
}

type memRules struct {
	mu    sync.Mutex
	saved []policy.Rule
}

func (m *memRules) SaveRule(ctx context.Context, r policy.Rule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saved = append(m.saved, r)
	return nil
}
func (m *memRules) DeleteRule(ctx context.Context, id string) (bool, error) { return false, nil }
func (m *memRules) LoadRules(ctx context.Context) ([]policy.Rule, error)    { return nil, nil }

// Allow and deny weigh the same: only the default answer is marked, and
// keyboard focus lands on it once the guard has passed — Deny for a
// target that holds secrets. Previous/next walk the waiting approvals.
func TestDialogDefaultAndSteps(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/etc/a", 0))
	secret := h.approval("ap_2", "/home/alice/.ssh/id_ed25519", time.Second)
	secret.Sensitive = "SSH keys"
	h.request(secret)
	h.request(h.approval("ap_3", "/etc/c", 2*time.Second))
	d := h.tray.dialog
	check := func(want policy.Decision) {
		t.Helper()
		for dec, b := range d.buttons {
			if b.Importance == widget.DangerImportance || (b.Importance == widget.HighImportance) != (dec == want) {
				t.Errorf("%s: importance %v (default %s)", dec, b.Importance, want)
			}
		}
		h.advance(GuardDelay)
		if f := d.win.Canvas().Focused(); f != d.buttons[want] {
			t.Errorf("focus on %v, want the %s button", f, want)
		}
	}
	if !d.prev.Visible() || !d.next.Visible() || d.position.Text != "1 of 3" {
		t.Fatalf("previous/next %v/%v, position %q", d.prev.Visible(), d.next.Visible(), d.position.Text)
	}
	check(policy.AllowOnce)
	test.Tap(d.next)
	if d.target.Text != "/home/alice/.ssh/id_ed25519" || d.position.Text != "2 of 3" {
		t.Fatalf("after Next: %q %q", d.target.Text, d.position.Text)
	}
	if anyEnabled(d) {
		t.Error("a stepped-to approval is answerable before its guard")
	}
	check(policy.DenyOnce)
	test.Tap(d.next)
	test.Tap(d.next) // stops at the end
	if d.position.Text != "3 of 3" {
		t.Errorf("after Next twice more: %q", d.position.Text)
	}
	test.Tap(d.prev)
	test.Tap(d.prev)
	if d.target.Text != "/etc/a" || d.position.Text != "1 of 3" {
		t.Errorf("after Previous twice: %q %q", d.target.Text, d.position.Text)
	}
	h.resolve("ap_2")
	h.resolve("ap_3")
	if d.prev.Visible() || d.next.Visible() {
		t.Error("previous/next shown with one approval left")
	}
}

// TestDialogPictures draws the dialog with three approvals waiting, a
// normal one and one for secrets, with Fyne's software painter, and
// leaves the pictures in $CORRAL_SHOTS when set (for the eye; the
// assertions are TestDialogDefaultAndSteps').
func TestDialogPictures(t *testing.T) {
	if shots.Dir() == "" {
		t.Skip("CORRAL_SHOTS is not set")
	}
	h := newHarness(t)
	h.request(h.approval("ap_1", "/home/alice/notes/todo.txt", 0))
	secret := h.approval("ap_2", "/home/alice/.ssh/id_ed25519", time.Second)
	secret.Sensitive, secret.Folder = "SSH keys", ""
	h.request(secret)
	h.request(h.approval("ap_3", "/etc/c", 2*time.Second))
	d := h.tray.dialog
	save := func(name string) {
		h.advance(GuardDelay)
		shots.Save(t, name, d.win.Canvas().Capture)
	}
	save("vocab-dialog-normal-1of3")
	test.Tap(d.next)
	save("vocab-dialog-sensitive-2of3")
}

// A short request fits the window whole: its details need no scrolling
// (the window's own padding once cut the last row, "Why", in half).
func TestDialogFitsShortRequest(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/home/alice/notes/todo.txt", 0))
	h.request(h.approval("ap_2", "/etc/c", time.Second))
	d := h.tray.dialog
	if got, need := d.scroll.Size().Height, d.form.MinSize().Height; got < need {
		t.Errorf("details get %v of the %v they need", got, need)
	}
}

// Desktop notifications follow the owner's setting as it is now: turned
// off on the Settings page, the next question sends none.
func TestNotifyFollowsTheSetting(t *testing.T) {
	var off atomic.Bool
	h := newHarness(t, func(c *Config) { c.NotifyOff = off.Load })
	if !h.tray.notify() {
		t.Error("notifications off while the setting is on")
	}
	off.Store(true)
	if h.tray.notify() {
		t.Error("notifications on after the setting was turned off")
	}
}
