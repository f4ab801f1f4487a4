package ui

import (
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/words"
	"corral/ui/internal/shots"
)

// The tray's Recent activity speaks core/words: the owner is "you", a
// paired device its name, operations and decisions their labels — never
// "agents.resume allow (owner)" or "device:Kitchen phone".
func TestActivityLineInTheTableWords(t *testing.T) {
	for _, tc := range []struct {
		e       audit.Event
		want    []string
		notWant []string
	}{
		{audit.Event{Client: "owner", Op: "agents.resume", Decision: audit.Allow, DecidedBy: audit.ByOwner},
			[]string{"you", "Resumed agents", "Allowed (by you)"}, []string{"owner", "agents.resume", "allow"}},
		{audit.Event{Client: "device:Kitchen phone", Op: "rule.revoke", Decision: audit.Allow, DecidedBy: audit.ByOwner},
			[]string{"Kitchen phone", "Rule revoked"}, []string{"device:"}},
		{audit.Event{Client: "browser", Op: "rule.create", Decision: audit.Allow, DecidedBy: audit.ByOwner},
			[]string{"you", "Rule added"}, []string{"browser"}},
	} {
		tc.e.Time = time.Date(2026, 11, 27, 14, 3, 7, 0, time.Local)
		line := eventLine(tc.e)
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("%q lacks %q", line, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(line, w) {
				t.Errorf("%q shows the raw %q", line, w)
			}
		}
	}
}

// The native dialog names the lifetimes as the web does (core/words).
func TestDialogLifetimesAreTheTable(t *testing.T) {
	var want []string
	for _, l := range words.Lifetimes {
		want = append(want, l.Label)
	}
	if got := expiryLabels(); !slices.Equal(got, want) {
		t.Errorf("dialog lifetimes %q, want %q", got, want)
	}
	if expiries[defaultExpiry].Label != "for 7 days" {
		t.Errorf("default lifetime %q", expiries[defaultExpiry].Label)
	}
}

// The native dialog names the choices as the web's card does and colours
// its countdown the same: the table's colour, then its "low" colour once
// less than words.CountdownLow is left.
func TestDialogSaysWhatTheWebSays(t *testing.T) {
	h := newHarness(t)
	h.request(h.approval("ap_1", "/home/alice/notes/todo.txt", 0))
	d := h.tray.dialog
	if d.widen.Text != words.FolderWide+" /home/alice/notes" {
		t.Errorf("folder-wide box %q", d.widen.Text)
	}
	if !strings.Contains(d.countdown.Text, "Denied automatically in 2:00") {
		t.Errorf("countdown %q", d.countdown.Text)
	}
	if d.bar.fill.FillColor != countdownColor(words.CountdownColor) {
		t.Errorf("bar colour %v with two minutes left", d.bar.fill.FillColor)
	}
	shots.Save(t, "native-dialog", h.tray.dialog.win.Canvas().Capture)
	h.advance(105 * time.Second)
	if d.bar.fill.FillColor != countdownColor(words.CountdownLowColor) {
		t.Errorf("bar colour %v with 15 s left, want the low colour", d.bar.fill.FillColor)
	}
	if countdownColor("#c8643f") != (color.NRGBA{R: 0xc8, G: 0x64, B: 0x3f, A: 0xff}) {
		t.Error("countdownColor")
	}
}
