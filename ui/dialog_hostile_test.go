package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"corral/core/audit"
	"corral/core/policy"
)

// An agent's text cannot write into the owner's screen: the dialog and
// the notification show control characters, ANSI sequences and bidi
// overrides as escapes, and the notification renders no markup.
func TestDialogShowsAgentTextSafely(t *testing.T) {
	h := newHarness(t)
	a := h.approval("ap_1", "/home/alice/\x1b[2J\x1b[31minvoice_\u202efdp.exe", 0)
	a.Reason = "because\x1b]0;owned\x07 <b>now</b> & \u2066x\u2069"
	wantBody := `alice-agent wants to read /home/alice/\x1b[2J\x1b[31minvoice_\u202efdp.exe`
	test.AssertNotificationSent(t, fyne.NewNotification("Corral: an agent is asking", wantBody), func() {
		h.request(a)
	})
	d := h.tray.dialog
	for name, got := range map[string]string{"title": d.title.Text, "target": d.target.Text, "why": d.why.Text, "widen": d.widen.Text} {
		if strings.ContainsAny(got, "\x1b\x07\u202e\u2066\u2069") {
			t.Errorf("%s shows hidden characters as themselves: %q", name, got)
		}
	}
	if d.target.Text != `/home/alice/\x1b[2J\x1b[31minvoice_\u202efdp.exe` {
		t.Errorf("target %q", d.target.Text)
	}
	if d.why.Text != `because\x1b]0;owned\x07 <b>now</b> & \u2066x\u2069` {
		t.Errorf("why %q", d.why.Text)
	}
	if got := (prompt{a: policy.Approval{Client: "c", Access: policy.Read, Target: "<a href='x'>&amp;</a>"}}).notification(); strings.ContainsAny(got, "<>&") {
		t.Errorf("notification body keeps markup: %q", got)
	}
}

// However long a command is, the approval window stays within
// dialogMaxHeight, the command scrolls, and every button is in view.
func TestDialogLongCommandKeepsButtonsInView(t *testing.T) {
	h := newHarness(t)
	a := h.approval("ap_1", strings.Repeat("echo a very long command line that an agent made up\n", 200), 0)
	a.Access, a.OneTimeOnly = policy.Execute, true
	h.request(a)
	d := h.tray.dialog
	win := d.win.Canvas().Size()
	if win.Height > dialogMaxHeight {
		t.Errorf("window %v is taller than %d", win, dialogMaxHeight)
	}
	if d.form.MinSize().Height <= d.scroll.Size().Height {
		t.Errorf("the command (%v high) does not need the scroll (%v): the test shows nothing", d.form.MinSize().Height, d.scroll.Size().Height)
	}
	drv := fyne.CurrentApp().Driver()
	for _, label := range visibleButtons(d) {
		for _, b := range d.buttons {
			if b.Text != label {
				continue
			}
			pos := drv.AbsolutePositionForObject(b)
			if pos.Y < 0 || pos.Y+b.Size().Height > win.Height || b.Size().Height == 0 {
				t.Errorf("button %q at %v size %v is outside the window %v", label, pos, b.Size(), win)
			}
		}
	}
	// A short request makes a short window again.
	h.resolve("ap_1")
	h.request(h.approval("ap_2", "/home/alice/a.txt", 0))
	if got := d.win.Canvas().Size().Height; got >= dialogMaxHeight {
		t.Errorf("short request: window %v high", got)
	}
}

// The tray's Recent activity rows and the menu's approval items show an
// agent's hidden characters as escapes too.
func TestTrayListsShowAgentTextSafely(t *testing.T) {
	line := eventLine(audit.Event{Client: "alice-agent", Op: "file.read", Target: "/tmp/\x1b[2J\u202eevil", Decision: audit.Deny})
	if strings.ContainsAny(line, "\x1b\u202e") || !strings.Contains(line, `/tmp/\x1b[2J\u202eevil`) {
		t.Errorf("activity line %q", line)
	}
	a := policy.Approval{Client: "alice-agent", Access: policy.Read, Target: "/home/alice/\u202eevil\nline"}
	for _, it := range menuModel(Status{}, []policy.Approval{a}, false) {
		for _, sub := range it.Children {
			if strings.ContainsAny(sub.Label, "\u202e\n") || !strings.Contains(sub.Label, `\u202eevil\nline`) {
				t.Errorf("menu item %q", sub.Label)
			}
		}
	}
}
