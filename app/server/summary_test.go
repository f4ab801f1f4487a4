package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"corral/core/audit"

	"github.com/chromedp/chromedp"
)

type summaryWire struct {
	Client         string
	Files          int
	FileCalls      int `json:"file_calls"`
	Commands       int
	CommandsFailed int `json:"commands_failed"`
	Domains        []struct {
		Domain          string
		Allowed, Denied int
	}
	Questions int
	Answers   []struct {
		Answer string
		Count  int
	}
}

// agentDay makes alice-agent's day: a file written by two calls and one
// by a command (2 files in 3 calls), a command that fails (exit 3), two
// questions (one allowed once, one denied) and connections to two hosts
// (recorded as the network gate records them); bob-agent writes a file
// of his own. It returns the harness.
func agentDay(t *testing.T) *harness {
	t.Helper()
	h, outside := startWithOutsideFile(t)
	alice, bob := h.dial(aliceKey), h.dial(bobKey)
	own := h.owner(t)
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "one\n"))
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "two\n"))
	rpcCall[any](t, alice, "command.run", m("command", "echo made > made.txt"))
	rpcCall[any](t, alice, "command.run", m("command", "exit 3"))
	rpcCall[any](t, bob, "file.write", m("path", "bob.txt", "content", "bob\n"))
	for _, answer := range []string{"allow_once", "deny_once"} {
		done := async(alice, "file.read", m("path", outside))
		a := own.requested()
		rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", answer))
		<-done
	}
	for _, c := range []struct {
		target string
		d      audit.Decision
	}{{"pypi.example:443", audit.Allow}, {"pypi.example:443", audit.Allow}, {"files.example:443", audit.Allow}, {"pypi.example:443", audit.Deny}} {
		if _, err := h.store.Record(context.Background(), audit.Event{Time: time.Now().UTC(), Client: "alice-agent", User: "alice",
			Op: "network.connect", Target: c.target, Decision: c.d, DecidedBy: audit.ByRule}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// audit.summary counts one agent's day in one call: a file changed by two
// calls counts once, a failed command is said, each host once with its
// connections, each question by its answer; another agent's events and
// events before since are not counted; agents may not ask.
func TestAuditSummary(t *testing.T) {
	t.Parallel()
	h := agentDay(t)
	own := h.dial(ownerToken)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	s := rpcCall[summaryWire](t, own, "audit.summary", m("client", "alice-agent", "since", since))
	if s.Client != "alice-agent" || s.Files != 2 || s.FileCalls != 3 || s.Commands != 2 || s.CommandsFailed != 1 || s.Questions != 2 {
		t.Errorf("summary: %+v", s)
	}
	if len(s.Domains) != 2 || s.Domains[0].Domain != "pypi.example" || s.Domains[0].Allowed != 2 || s.Domains[0].Denied != 1 ||
		s.Domains[1].Domain != "files.example" || s.Domains[1].Allowed != 1 {
		t.Errorf("domains: %+v", s.Domains)
	}
	answers := map[string]int{}
	for _, a := range s.Answers {
		answers[a.Answer] = a.Count
	}
	if len(answers) != 2 || answers["allow_once"] != 1 || answers["deny_once"] != 1 {
		t.Errorf("answers: %+v", s.Answers)
	}
	b := rpcCall[summaryWire](t, own, "audit.summary", m("client", "bob-agent", "since", since))
	if b.Files != 1 || b.FileCalls != 1 || b.Commands != 0 || b.Questions != 0 || len(b.Domains) != 0 {
		t.Errorf("bob's summary: %+v", b)
	}
	later := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	if n := rpcCall[summaryWire](t, own, "audit.summary", m("client", "alice-agent", "since", later)); n.Files != 0 || n.Commands != 0 || n.Questions != 0 {
		t.Errorf("nothing after now: %+v", n)
	}
	if ce := callErr(t, h.dial(aliceKey), "audit.summary", m("client", "alice-agent", "since", since)); ce.Data.Kind != "forbidden" {
		t.Errorf("an agent asked for a summary: %+v", ce)
	}
	if ce := callErr(t, own, "audit.summary", m("client", "alice-agent", "since", "today")); ce.Data.Kind != "invalid_params" || !strings.Contains(ce.Message, "RFC 3339") {
		t.Errorf("since today: %+v", ce)
	}
	// asked: true lists the events the owner was asked about.
	p := rpcCall[struct{ Events []struct{ Answer string } }](t, own, "audit.query", m("agent", "alice", "asked", true))
	if len(p.Events) != 2 || p.Events[0].Answer == "" {
		t.Errorf("asked events: %+v", p.Events)
	}
}

// On the Agents page each agent's row sums up its day, and each line
// opens the Activity log filtered to those events; the Activity page
// shows every agent's.
func TestDashboardDaySummary(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h := agentDay(t)
	b := newBrowser(t)
	b.login(h)
	b.openTab("agents")
	row := `document.querySelector('.agent-row[data-name="alice-agent"] .day-summary')`
	b.wait(row + `?.dataset.ready === 'today'`)
	text := js[string](b, row+`.innerText`)
	for _, want := range []string{"Changed 2 files in 3 calls", "Ran 2 commands (1 failed or refused)", "Reached 2 domains: pypi.example (1 refused), files.example",
		"Asked you 2 questions: 1 allowed once, 1 denied"} {
		if !strings.Contains(text, want) {
			t.Errorf("alice's day lacks %q:\n%s", want, text)
		}
	}
	if s := js[string](b, `document.querySelector('.agent-row[data-name="bob-agent"] .day-summary').innerText`); !strings.Contains(s, "Changed 1 file in 1 call") || !strings.Contains(s, "Asked you nothing") {
		t.Errorf("bob's day:\n%s", s)
	}
	js[chromedp.Void](b, `document.querySelector('.agent-row[data-name="alice-agent"]').scrollIntoView({block: 'center'})`)
	b.shot("day-summary-agents-1280")

	// The last hour, then the files line: the Activity log of alice's changes.
	b.click(`.agent-row[data-name="alice-agent"] .day-summary button[data-period="1h"]`)
	b.wait(row + `?.dataset.ready === '1h'`)
	b.click(`.agent-row[data-name="alice-agent"] .day-summary li[data-kind="files"] a`)
	b.wait(`location.hash.startsWith('#activity?client=alice-agent&op=changes&range=1h')`)
	b.wait(`document.querySelectorAll('#audit-table tbody tr[data-id]').length === 3`)
	for _, r := range b.rows() {
		if r.Client != "alice-agent" || (r.Op != "file.write" && r.Op != "command.run") {
			t.Errorf("a row of alice's changes: %+v", r)
		}
	}
	// The questions line: the two questions, with their answers.
	b.openTab("agents")
	b.wait(row + `?.dataset.ready === 'today'`)
	b.click(`.agent-row[data-name="alice-agent"] .day-summary li[data-kind="questions"] a`)
	b.wait(`location.hash.includes('op=asked') && location.hash.includes('range=custom')`)
	b.wait(`document.querySelectorAll('#audit-table tbody tr[data-id]').length === 2`)
	if n := js[int](b, `[...document.querySelectorAll('#audit-table tbody tr[data-id]')].filter(tr => tr.innerText.includes('Read a file')).length`); n != 2 {
		t.Errorf("%d question rows are file reads, want 2", n)
	}
	// The Activity page: every agent's day.
	b.hash("#activity")
	b.click(`#day-summaries > summary`)
	b.wait(`document.querySelectorAll('#day-summaries .day-summary[data-ready]').length >= 2`)
	if s := js[string](b, `document.querySelector('#day-summaries .day-summary[data-agent="alice-agent"]').innerText`); !strings.Contains(s, "Changed 2 files in 3 calls") {
		t.Errorf("the Activity page's summary of alice:\n%s", s)
	}
	b.shot("day-summary-activity-1280")
	b.labelled()
	b.noPageErrors()
}

// A folder of 30 files an agent deletes with a command: the Changes page
// shows every agent's changes without choosing one, counts a file changed
// by two calls once, groups the command's 30 files under it with one
// "Undo this command" (no Restore per file) and offers "Restore this
// folder"; two clicks put every file back, and the page, read again,
// offers no restore any more. An agent added meanwhile joins the agent
// list without a reload.
func TestDashboardRestoreFolder(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "command.run", m("command", "true")) // the scope as commands see it
	for i := range 30 {
		dir := "project"
		switch {
		case i < 12:
			dir = "project/.git/objects/" + string(rune('a'+i%4))
		case i < 20:
			dir = "project/src"
		}
		if err := os.MkdirAll(filepath.Join(scope, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(scope, dir, "f"+string(rune('a'+i%26))+string(rune('0'+i/26))), randomBytes(50+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, filepath.Join(scope, "project"))
	if len(before) != 30 {
		t.Fatalf("made %d files", len(before))
	}
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "one\n"))
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "two\n"))
	if r := rpcCall[struct{ ExitCode int }](t, alice, "command.run", m("command", "rm -rf project")); r.ExitCode != 0 {
		t.Fatalf("rm: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(scope, "project")); !os.IsNotExist(err) {
		t.Fatalf("project/ still there: %v", err)
	}

	b := newBrowser(t)
	b.login(h)
	b.openTab("changes")
	b.wait(`document.body.dataset.changesReady && !!document.querySelector('#wc-list .wc-restore-folder')`)
	if v := js[string](b, `document.querySelector('#wc-agent').value`); v != "" {
		t.Errorf("the agent chosen at first: %q, want all agents", v)
	}
	if s := js[string](b, `document.querySelector('#wc-summary').textContent`); !strings.Contains(s, "changed 31 files in 3 calls") {
		t.Errorf("the summary: %q", s)
	}
	if n := js[int](b, `[...document.querySelectorAll('#wc-list button')].filter(x => x.textContent === 'Restore').length`); n != 0 {
		t.Errorf("%d Restore buttons, one per file; want none", n)
	}
	group := js[string](b, `document.querySelector('#wc-list .wc-event:has(.wc-restore-folder)').innerText`)
	for _, want := range []string{"rm -rf project", "30 files", "Undo this command", "Deleted folder project/ (30 files)", "Restore this folder"} {
		if !strings.Contains(group, want) {
			t.Errorf("the command's group lacks %q:\n%s", want, group)
		}
	}
	b.shot("changes-grouped-1280")
	b.phone()
	b.shot("changes-grouped-390")
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the Changes page at 390 px is %d px wide", w)
	}
	b.desktop()

	// An agent added now joins the list.
	rpcCall[any](t, own, "agent.add", m("name", "late-agent", "user", "alice"))
	b.wait(`[...document.querySelectorAll('#wc-agent option')].some(o => o.value === 'late-agent')`)

	ready := js[string](b, `document.body.dataset.changesReady`)
	b.click(`#wc-list .wc-restore-folder[data-folder="project"]`)
	b.click(`#wc-list .wc-restore-folder[data-folder="project"]`)
	b.wait(`document.body.dataset.changesReady && document.body.dataset.changesReady !== ` + jsString(ready) + ` && document.querySelector('#wc-status').textContent.includes('project/ is back: 30 files restored')`)
	sameTree(t, "project/ after Restore this folder", tree(t, filepath.Join(scope, "project")), before)
	if got, _ := os.ReadFile(filepath.Join(scope, "notes.txt")); string(got) != "two\n" {
		t.Errorf("notes.txt after restoring the folder: %q", got)
	}
	text := js[string](b, `document.querySelector('#wc-list').innerText`)
	if strings.Contains(text, "Restore") {
		t.Errorf("the page still offers a restore:\n%s", text)
	}
	if !strings.Contains(text, "Undone: everything is as it was before this call.") {
		t.Errorf("the command's group after the restore:\n%s", text)
	}
	b.shot("changes-restored-1280")
	b.labelled()
	b.noPageErrors()
}

// Every Activity row of an event that changed files has Undo in the row:
// two clicks undo it, without opening the detail.
func TestDashboardActivityRowUndo(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "one\n"))
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "two\n"))
	rpcCall[any](t, alice, "file.read", m("path", "notes.txt"))
	ev := lastEvent(t, own, "file.write")

	b := newBrowser(t)
	b.login(h)
	b.hash("#activity")
	b.wait(`document.querySelectorAll('#audit-table tbody tr[data-id]').length >= 3`)
	if n := js[int](b, `document.querySelectorAll('#audit-table tbody button[data-act="undo"]').length`); n != 2 {
		t.Errorf("%d rows offer Undo, want the 2 writes", n)
	}
	btn := `#audit-table tbody tr[data-id="` + strconv.FormatInt(ev.ID, 10) + `"] button[data-act="undo"]`
	b.click(btn)
	b.wait(`document.querySelector(` + jsString(btn) + `).textContent.includes('Sure? Undo')`)
	b.dark(false) // the button's colour transition ends before the screenshot
	b.shot("activity-row-undo-1280")
	b.click(btn)
	b.wait(`document.querySelector('#audit-table tbody tr[data-id="` + strconv.FormatInt(ev.ID, 10) + `"] .row-undone')?.textContent.includes('undone: 1 file put back')`)
	if got, _ := os.ReadFile(filepath.Join(scope, "notes.txt")); string(got) != "one\n" {
		t.Errorf("notes.txt after the row's Undo: %q", got)
	}
	if open := js[bool](b, `[...document.querySelectorAll('dialog')].some(d => d.open)`); open {
		t.Error("the row's Undo opened the event's detail")
	}
	b.noPageErrors()
}
