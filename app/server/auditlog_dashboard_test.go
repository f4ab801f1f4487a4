package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"

	"github.com/chromedp/chromedp"
)

// The audit log answers "what happened to my files": a search in any case
// and by a part of a name, the agent by a part of its name, every change
// at once, yesterday, a failed command marked with its exit status, and a
// chart whose axis names the days.
func TestDashboardAuditFindsWhatHappened(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	yesterday := midnight.Add(-12 * time.Hour)
	rec := func(e audit.Event) {
		t.Helper()
		if e.Time.IsZero() {
			e.Time = now.Add(-time.Minute)
		}
		e.User, e.Decision, e.DecidedBy = "alice", audit.Allow, audit.ByScope
		if e.Client == "" {
			e.Client = "Claude-Desktop"
		}
		if _, err := h.store.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	rec(audit.Event{Op: "file.write", Target: "Notes/Budget_2026.ods", Changes: []audit.Change{{Path: "Notes/Budget_2026.ods"}}})
	rec(audit.Event{Op: "file.read", Target: "notes/budget-old.ods"})
	rec(audit.Event{Op: "file.delete", Target: "notes/draft.txt", Changes: []audit.Change{{Path: "notes/draft.txt"}}, Client: "codex"})
	rec(audit.Event{Op: "command.run", Target: "make test", Detail: "exit 2"})
	rec(audit.Event{Op: "command.run", Target: "ls", Detail: "exit 0"})
	rec(audit.Event{Op: "file.read", Target: "notes/yesterday.txt", Time: yesterday})

	// The owner's own looking around: hidden unless asked for.
	rec(audit.Event{Op: "folder.list", Target: "notes", Client: "browser", Time: now.Add(-30 * time.Second)})
	rec(audit.Event{Op: "file.read", Target: "notes/from-phone.txt", Client: "device:Pixel", Time: now.Add(-30 * time.Second)})

	b := newBrowser(t)
	b.login(h)
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 6`)
	b.click("#f-own")
	b.wait(`document.body.dataset.auditReady && location.hash.includes('own=1') && document.querySelectorAll('#audit-table tbody tr').length === 8`)
	b.shot("auditlog-own-actions-shown")
	b.click("#f-own")
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === 6`)
	b.shot("auditlog-own-actions-hidden")

	// A command that failed says so in its row, with its exit status; one
	// that succeeded does not.
	js[chromedp.Void](b, `document.querySelector('.exit-bad')?.scrollIntoView({block: 'center'})`)
	exits := js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => tr.querySelector('.exit-bad')?.textContent || '')`)
	if strings.Join(exits, "|") != "|exit 2||||" { // yesterday's event, recorded last, is at the bottom
		t.Errorf("exit badges by row, newest first: %q", exits)
	}
	b.shot("auditlog-nonzero-exit")
	js[chromedp.Void](b, `window.scrollTo(0, 0)`)

	targets := func() string {
		return strings.Join(js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr .t-target')].map(td => td.textContent)`), ",")
	}
	waitTargets := func(want string) {
		t.Helper()
		b.wait(fmt.Sprintf(`document.body.dataset.auditReady && [...document.querySelectorAll('#audit-table tbody tr .t-target')].map(td => td.textContent).join(',') === %s`, jsString(want)))
	}

	// Search ignores case and finds a part of a name; _ is no wildcard.
	b.setValue("#f-text", "BUDGET")
	waitTargets("notes/budget-old.ods,Notes/Budget_2026.ods")
	b.setValue("#f-text", "t_2")
	waitTargets("Notes/Budget_2026.ods")
	b.click("#f-clear")

	// The agent by a part of its name, in any case.
	b.setValue("#f-client", "claude")
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === 5 && [...document.querySelectorAll('.t-client')].every(td => td.textContent === 'Claude-Desktop')`)
	b.click("#f-clear")

	// Every change at once: the write and the delete, not reads or commands that changed nothing.
	b.choose("#f-op", "changes")
	waitTargets("notes/draft.txt,Notes/Budget_2026.ods")
	b.shot("auditlog-all-changes")
	if hash := js[string](b, `location.hash`); !strings.Contains(hash, "op=changes") {
		t.Errorf("hash %q", hash)
	}
	// A live change that matches appears on top; a read does not.
	b.click("#live")
	b.wait(`document.querySelector('#live').getAttribute('aria-pressed') === 'true' && document.body.dataset.auditReady`)
	rec(audit.Event{Op: "file.read", Target: "notes/live-read.txt", Time: now})
	rec(audit.Event{Op: "file.move", Target: "notes/moved.txt", Time: now, Changes: []audit.Change{{Path: "notes/moved.txt", From: "notes/a.txt"}}})
	b.wait(`document.querySelector('#audit-table tbody tr .t-target')?.textContent === 'notes/moved.txt'`)
	if got := targets(); strings.Contains(got, "live-read") {
		t.Errorf("a read showed under All changes: %s", got)
	}
	b.click("#live")
	b.click("#f-clear")

	// Yesterday: only what happened between yesterday's and today's midnight.
	b.choose("#f-range", "yesterday")
	waitTargets("notes/yesterday.txt")

	// Over several days, hourly columns name their date, not the hour alone.
	b.hash(fmt.Sprintf("#activity?range=custom&since=%s&until=%s", midnight.Add(-48*time.Hour).UTC().Format(time.RFC3339), now.Add(time.Hour).UTC().Format(time.RFC3339)))
	// (Waits for the new range's chart: the one of Yesterday shows first.)
	b.wait(`document.body.dataset.auditReady && [...document.querySelectorAll('#chart svg > text')].filter(x => /[A-Za-z]/.test(x.textContent)).length >= 2`)
	if labels := js[[]string](b, `[...document.querySelectorAll('#chart svg > text')].map(x => x.textContent)`); !slices.ContainsFunc(labels, func(l string) bool { return strings.HasSuffix(l, ":00") && !strings.ContainsAny(l, "JFMASOND") }) {
		t.Errorf("chart axis lost its plain hours between dates: %q", labels)
	}
	b.shot("auditlog-chart-dates")
	b.noPageErrors()
}

// setValue replaces a text field's value and fires input, as typing would.
func (b *browser) setValue(sel, text string) {
	b.t.Helper()
	js[chromedp.Void](b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel, text))
}
