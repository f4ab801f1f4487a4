package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/words"
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
