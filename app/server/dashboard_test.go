package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"corral/app/client"
	"corral/app/testhost"
	"corral/app/testkit/chromium"
	"corral/assets"
	"corral/core/audit"
	"corral/core/policy"
	"corral/core/testkit/poll"
	"corral/store"
)

// The dashboard tests drive a real headless Chromium (one process shared
// by the tests, a tab each, one test at a time) against a real server
// (the harness) with a real store. They skip only under -short; without
// -short a missing Chromium fails them (packaging/deps.sh installs it).
// Screenshots go to the test's temp dir, and also to $CORRAL_SHOTS when set.

// browser is one tab of the shared Chromium.
type browser struct {
	t     testing.TB
	ctx   context.Context      // the tab
	id    cdp.BrowserContextID // the tab's, for browser-wide commands (downloads, permissions)
	shots string

	mu   sync.Mutex
	errs []string // exceptions and CSP reports from the page

	marks chan string // console markers noPageErrors writes, as the console stream reaches them
}

// consoleMark starts the console lines noPageErrors writes to know the
// stream has caught up.
const consoleMark = "corral-test-mark "

// chromiumPath is chromium.Path: the installed Chromium, or a failure
// (a skip under -short).
func chromiumPath(t testing.TB) string {
	t.Helper()
	return chromium.Path(t)
}

func TestMain(m *testing.M) {
	m.Run()
	chromium.StopShared()
}

// browsers lets one browser test run at a time. The tests run in
// parallel; two tabs at once were no faster on two cores (package 1:41
// against 1:44-1:55) and one of them failed a click on an element not
// laid out ("invalid dimensions"), while the tests without a browser
// fill the gaps.
var browsers = make(chan struct{}, 1)

// newBrowser opens a tab for t in a new BrowserContext of the shared
// Chromium, at a desktop viewport; t's cleanup closes both. The
// BrowserContext is off the record, as a guest window is: nothing of it
// outlives the test, and no other test sees it.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	return openTab(t, false)
}

// newOwnBrowser opens a tab for t in a Chromium of its own, in its
// fresh profile, for what Chromium does differently off the record: it
// preconnects for <link rel=preconnect> only in a profile, and a service
// worker's notifications did not show off the record in 2 of 6 runs, nor
// in the shared Chromium's profile in 1 of 2 runs of the whole suite.
func newOwnBrowser(t testing.TB) *browser {
	t.Helper()
	return openTab(t, true)
}

func openTab(t testing.TB, own bool) *browser {
	t.Helper()
	execPath := chromiumPath(t)
	browsers <- struct{}{}
	t.Cleanup(func() { <-browsers }) // after the tab's own cleanup below
	testhost.Quiet(t)                // no test host's pair comes or goes while pages load
	var ctx context.Context
	if own {
		ctx = ownChromium(t, execPath)
	} else {
		ctx = sharedTab(t, execPath)
	}
	info, err := chromedp.CallBrowser(ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: chromedp.FromContext(ctx).Target.TargetID})
	if err != nil {
		t.Fatalf("the new tab: %v", err)
	}
	b := &browser{t: t, ctx: ctx, id: info.TargetInfo.BrowserContextID, shots: filepath.Join(t.TempDir(), "shots"), marks: make(chan string, 1)}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			text := m.Text
			if mark, ok := strings.CutPrefix(text, consoleMark); ok && m.Type == chromedp.ConsoleLog {
				select {
				case b.marks <- mark:
				default: // noPageErrors gave up on this one
				}
				continue
			}
			if m.IsException() || strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Trusted Type") {
				b.mu.Lock()
				b.errs = append(b.errs, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// ownChromium starts a Chromium for t alone, stopped when t ends, and
// returns its first tab at a desktop viewport.
func ownChromium(t testing.TB, execPath string) context.Context {
	t.Helper()
	ctx, stop, err := chromium.Start(execPath)
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(stop)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("open a tab in Chromium: %v", err)
	}
	return ctx
}

// sharedTab opens a tab of the shared Chromium in a new BrowserContext,
// at a desktop viewport; t's cleanup closes both. A shared Chromium that
// died (a crash in another test) is started again once.
func sharedTab(t testing.TB, execPath string) context.Context {
	t.Helper()
	for try := 1; ; try++ {
		shared := chromium.Shared(t, execPath)
		tab, cancel := chromedp.NewContext(shared, chromedp.WithNewBrowserContext())
		err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 800)) // opens the tab
		if err == nil {
			t.Cleanup(cancel) // closes the tab and disposes of its BrowserContext
			return tab
		}
		cancel()
		if shared.Err() == nil || try == 2 {
			t.Fatalf("open a tab in Chromium: %v", err)
		}
	}
}

// do runs actions with a deadline, failing the test on error.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	chromium.Do(b.t, b.ctx, func() { b.shot("failed") }, actions...)
}

// js evaluates an expression (awaiting a promise) and decodes its value.
func js[T any](b *browser, expr string) T {
	b.t.Helper()
	return chromium.Eval[T](b.t, b.ctx, func() { b.shot("failed") }, expr)
}

// wait polls a JavaScript condition until it is true, across navigations.
func (b *browser) wait(cond string) {
	b.t.Helper()
	// Generous: CI runs every package's tests at once on two cores, and a
	// sandboxed command or a page load can take many seconds there.
	err := chromium.Wait(b.ctx, cond, 40*time.Second)
	if err == nil {
		return
	}
	b.shot("failed")
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main')?.innerText.slice(0, 1500) || document.body.innerText.slice(0, 1500)`))
	// What the page loaded, and when: a page stuck before its first
	// connection (seen under whole-suite load) shows whether a script
	// never arrived or the WebSocket never opened.
	loaded, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({ready: document.readyState, conn: document.querySelector('#conn')?.dataset.state,
		marks: performance.getEntriesByType('mark').map(m => m.name + '@' + Math.round(m.startTime)),
		loaded: performance.getEntriesByType('resource').map(r => r.name.replace(location.origin, '') + ' ' + Math.round(r.startTime) + '+' + Math.round(r.duration) + 'ms ' + (r.responseStatus || ''))})`))
	b.t.Fatalf("waiting for %s: %v\npage text:\n%s\npage load: %s", cond, err, body, loaded)
}

// hash moves the page to another view (a same-document navigation).
func (b *browser) hash(h string) {
	b.t.Helper()
	js[chromedp.Void](b, "location.hash = "+jsString(h))
}

// click clicks the first element matching a CSS selector, as a mouse would.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// openTab clicks a tab in the top bar and waits for its view. A click
// that Chromium drops under load (seen once in many runs, with the page
// scrolled far down) is given one more try; a view that never shows fails.
func (b *browser) openTab(name string) {
	b.t.Helper()
	sel := fmt.Sprintf(`a.tab[data-tab=%q]`, name)
	shown := fmt.Sprintf(`!document.querySelector('#view-%s').hidden`, name)
	b.click(sel)
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](shown, chromedp.WithPollingInterval(25*time.Millisecond)))
	cancel()
	if err != nil {
		b.t.Logf("the %s tab did not open after a click (%v); clicking again", name, err)
		b.click(sel)
	}
	b.wait(shown)
}

// choose sets a form control's value and fires change, as picking would.
func (b *browser) choose(sel, value string) {
	b.t.Helper()
	js[chromedp.Void](b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value))
}

// desktop and phone switch the viewport.
func (b *browser) desktop() { b.t.Helper(); b.do(chromedp.EmulateViewport(1280, 800)) }
func (b *browser) phone() {
	b.t.Helper()
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
}

// dark switches prefers-color-scheme.
func (b *browser) dark(on bool) {
	b.t.Helper()
	v := "light"
	if on {
		v = "dark"
	}
	_, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}},
	})
	if err != nil {
		b.t.Fatal(err)
	}
	// Let colour transitions finish before a screenshot: two frames for
	// them to start, then each finite animation to its end.
	js[chromedp.Void](b, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))).then(() =>
		Promise.all(document.getAnimations().filter(a => a.effect?.getTiming().iterations !== Infinity).map(a => a.finished.catch(() => {}))))`)
}

// shot saves a screenshot of the viewport as name.png.
func (b *browser) shot(name string) {
	chromium.Shot(b.t, b.ctx, name, b.shots)
}

// labelled fails the test if a visible control has no accessible name.
func (b *browser) labelled() {
	b.t.Helper()
	bad := js[[]string](b, `[...document.querySelectorAll('input, select, button, a[href], [tabindex]')].filter(el => {
		const r = el.getBoundingClientRect();
		if (!r.width || !r.height) return false;
		const name = el.getAttribute('aria-label') || (el.labels && el.labels.length && el.labels[0].textContent.trim()) || el.textContent.trim() || el.title;
		return !name;
	}).map(el => el.outerHTML.slice(0, 120))`)
	for _, el := range bad {
		b.t.Errorf("control without a name: %s", el)
	}
}

// noPageErrors fails the test if the page threw or broke its CSP.
func (b *browser) noPageErrors() {
	b.t.Helper()
	// The console stream keeps the page's order: once a line logged now
	// arrives, every error before it has too.
	mark := strconv.FormatInt(time.Now().UnixNano(), 10)
	js[chromedp.Void](b, "console.log("+jsString(consoleMark+mark)+")")
	timeout := time.After(10 * time.Second)
	for seen := ""; seen != mark; {
		select {
		case seen = <-b.marks:
		case <-timeout:
			b.t.Fatal("the page's console did not catch up within 10 s")
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errs {
		b.t.Errorf("page error: %s", e)
	}
	b.errs = nil
}

// login opens the dashboard through a one-time code, as the tray and the
// start-up line give it (session.login would add an audit event of its
// own), and waits until the page is connected.
func (b *browser) login(h *harness) {
	b.t.Helper()
	b.loginAt(h, "")
}

// loginAt logs in like login with a fragment on the login URL, as the
// tray's Recent activity adds "#event=ID".
func (b *browser) loginAt(h *harness, fragment string) {
	b.t.Helper()
	u, _ := h.srv.LoginURL()
	if !strings.HasPrefix(u, h.url+"/login?code=") {
		b.t.Fatalf("login url %q", u)
	}
	b.do(chromedp.Navigate(u + fragment))
	b.wait(`document.querySelector('#conn')?.dataset.state === 'open' && document.body.dataset.auditReady`)
}

// rows reads the audit table.
type row struct {
	ID                                         string
	Client, User, Op, Target, Result, Decision string
}

func (b *browser) rows() []row {
	b.t.Helper()
	return js[[]row](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => ({
		ID: tr.dataset.id, Decision: tr.dataset.decision,
		Client: tr.querySelector('.t-client').textContent, User: tr.querySelector('.t-user').textContent,
		Op: tr.querySelector('.t-op').title, Target: tr.querySelector('.t-target').textContent,
		Result: tr.querySelector('.t-result').textContent}))`)
}

// seed makes a little of everything in the audit log and returns how many
// events it made.
func seed(t *testing.T, h *harness) int {
	t.Helper()
	alice, bob := h.dial(aliceKey), h.dial(bobKey)
	rpcCall[any](t, alice, "file.write", m("path", "notes/todo.md", "content", "- milk\n- fence posts\n"))
	rpcCall[any](t, alice, "file.read", m("path", "notes/todo.md"))
	rpcCall[any](t, alice, "result.save", m("title", "Weekly", "content", "# Weekly\n\nAll quiet.\n", "format", "markdown"))
	callErr(t, alice, "file.read", m("path", "missing.txt"))
	callErr(t, alice, "file.read", m("path", "../bob/diary.txt"))
	rpcCall[any](t, bob, "file.write", m("path", "share/plan.txt", "content", "shared plan"))
	rpcCall[any](t, bob, "folder.list", nil)
	// Nobody is there to ask (strict): denied at once.
	callErr(t, bob, "file.read", m("path", "/etc/hostname", "reason", "curious"))
	return 8
}

func TestDashboardAuditLog(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	n := seed(t, h)
	b := newBrowser(t)
	b.login(h)

	// The table shows every event, newest first.
	b.wait(fmt.Sprintf(`document.querySelectorAll('#audit-table tbody tr').length === %d`, n))
	rows := b.rows()
	if rows[0].Target != "/etc/hostname" || rows[0].Decision != "deny" || rows[len(rows)-1].Target != "notes/todo.md" {
		t.Fatalf("rows, newest first: %+v", rows)
	}
	var sawError bool
	for _, r := range rows {
		sawError = sawError || (r.Decision == "error" && r.Target == "missing.txt")
	}
	if !sawError {
		t.Errorf("no failed read of missing.txt in %+v", rows)
	}
	if title := js[string](b, `document.title`); title != "Corral — Activity" {
		t.Errorf("title %q", title)
	}
	// The chart counts the same events.
	total := js[int](b, `[...document.querySelectorAll('#chart rect.s-allow, #chart rect.s-deny, #chart rect.s-error')].length`)
	if total == 0 || !strings.Contains(js[string](b, `document.querySelector('#chart').getAttribute('aria-label')`), fmt.Sprintf("%d events", n)) {
		t.Errorf("chart: %d bars, label %q", total, js[string](b, `document.querySelector('#chart').getAttribute('aria-label')`))
	}
	b.shot("activity-desktop")
	b.labelled()
	b.dark(true)
	if bg := js[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(21, 23, 26)" {
		t.Errorf("dark mode background %q", bg)
	}
	b.shot("activity-desktop-dark")
	b.dark(false)

	// A click opens the detail: every field and how it was decided.
	b.click(`#audit-table tbody tr[data-id="` + rows[0].ID + `"]`)
	b.wait(`document.querySelector('#detail').open`)
	detail := js[string](b, `document.querySelector('#detail').innerText`)
	for _, want := range []string{"/etc/hostname", "bob-agent", "Nobody was there to ask", "strict", "Event number", "Duration"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
	b.shot("detail-desktop")
	b.do(chromedp.KeyEvent("\x1b")) // Escape closes it
	b.wait(`!document.querySelector('#detail').open`)
	// The keyboard opens it too.
	js[chromedp.Void](b, `document.querySelector('#audit-table tbody tr').focus()`)
	b.do(chromedp.KeyEvent("\r"))
	b.wait(`document.querySelector('#detail').open`)
	b.labelled()
	b.do(chromedp.KeyEvent("\x1b"))
	b.wait(`!document.querySelector('#detail').open && document.activeElement.matches('#audit-table tbody tr')`)

	// A file that is still there can be opened from its event.
	write := rows[len(rows)-1]
	b.click(`#audit-table tbody tr[data-id="` + write.ID + `"]`)
	b.wait(`[...document.querySelectorAll('#detail .file-actions button')].some(x => x.textContent === 'Open file')`)
	b.click(`#detail .file-actions button.primary`)
	waitTarget(t, b, h.url+"/files/out?path=notes/todo.md")
	b.click(`#detail-close`)

	// Filters narrow the rows and live in the URL.
	b.do(chromedp.SendKeys(chromedp.CSS("#f-client"), "bob-agent"))
	b.wait(`[...document.querySelectorAll('#audit-table tbody tr')].every(tr => tr.querySelector('.t-client').textContent === 'bob-agent') && document.querySelectorAll('#audit-table tbody tr').length === 3`)
	b.choose("#f-decision", "deny")
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 1`)
	if hash := js[string](b, `location.hash`); hash != "#activity?client=bob-agent&decision=deny" {
		t.Errorf("hash %q", hash)
	}
	b.do(chromedp.Reload())
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === 1`)
	if got := js[[]string](b, `[document.querySelector('#f-client').value, document.querySelector('#f-decision').value]`); got[0] != "bob-agent" || got[1] != "deny" {
		t.Errorf("filters after reload: %q", got)
	}
	if r := b.rows(); r[0].Target != "/etc/hostname" {
		t.Errorf("filtered rows after reload: %+v", r)
	}
	// Export the filtered view: CSV and JSON Lines, downloaded as files.
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads, BrowserContextID: b.id,
	}); err != nil {
		t.Fatal(err)
	}
	b.click("#export-menu summary")
	b.click(`[data-export="csv"]`)
	csv := waitDownload(t, downloads, ".csv")
	if lines := strings.Split(strings.TrimSpace(csv), "\r\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "id,time,client,user,op,target,decision,decided_by") ||
		!strings.Contains(lines[1], ",bob-agent,bob,file.read,/etc/hostname,deny,strict,") {
		t.Errorf("CSV export:\n%s", csv)
	}
	b.click("#export-menu summary")
	b.click(`[data-export="jsonl"]`)
	var ev struct{ Client, Target, Decision string }
	if err := json.Unmarshal([]byte(waitDownload(t, downloads, ".jsonl")), &ev); err != nil || ev.Target != "/etc/hostname" || ev.Decision != "deny" {
		t.Errorf("JSONL export: %+v %v", ev, err)
	}

	// Free text and the time range narrow too; Clear brings everything back.
	b.click("#f-clear")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-text"), "todo.md\n"))
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length >= 2 && [...document.querySelectorAll('#audit-table tbody tr .t-target')].every(td => td.textContent.includes('todo.md'))`)
	b.choose("#f-range", "1h")
	b.wait(`location.hash.includes('range=1h') && document.querySelectorAll('#audit-table tbody tr').length >= 2`)
	b.hash("#activity?range=custom&since=2001-01-01T00:00:00Z&until=2001-01-02T00:00:00Z")
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === 0 && !document.querySelector('#audit-empty').hidden`)
	b.click("#f-clear")
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length >= 9`)

	// Live tail: a new event appears at the top without a reload.
	b.click("#live")
	b.wait(`document.querySelector('#live').getAttribute('aria-pressed') === 'true' && location.hash.includes('live=1') && document.body.dataset.auditReady`)
	rpcCall[any](t, h.dial(aliceKey), "file.write", m("path", "notes/live.txt", "content", "fresh"))
	b.wait(`document.querySelector('#audit-table tbody tr .t-target')?.textContent === 'notes/live.txt'`)
	b.click("#live")

	// Phone width: the same view, cards instead of a table.
	b.phone()
	b.do(chromedp.Reload())
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length >= 9`)
	b.shot("activity-phone")
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("page is %dpx wide at 390px", w)
	}
	small := js[[]string](b, `[...document.querySelectorAll('button, a.btn, a.tab, select, input')].filter(el => {
		const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.height < 40 && el.offsetParent !== null;
	}).map(el => el.id || el.className || el.textContent)`)
	if len(small) > 0 {
		t.Errorf("controls under 40px tall at phone width: %q", small)
	}
	b.click(`#audit-table tbody tr`)
	b.wait(`document.querySelector('#detail').open`)
	b.shot("detail-phone")
	b.noPageErrors()
}

func TestDashboardScrollLoadsMore(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	const n = 250
	recordMany(t, h, n)
	b := newBrowser(t)
	b.login(h)
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 100 && !document.querySelector('#load-more').hidden`)
	for _, want := range []int{200, n} {
		js[chromedp.Void](b, `document.querySelector('#audit-more').scrollIntoView()`)
		b.wait(fmt.Sprintf(`document.querySelectorAll('#audit-table tbody tr').length === %d`, want))
	}
	b.wait(`!document.querySelector('#audit-end').hidden && document.querySelector('#load-more').hidden`)
	ids := js[[]int](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => +tr.dataset.id)`)
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			// The rows' times too, to tell a misplaced row from a repeat.
			rows := js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => tr.dataset.id + '@' + tr.querySelector('.t-time').title + (tr.classList.contains('fresh') ? ' (fresh)' : ''))`)
			t.Fatalf("rows not newest first without repeats at %d of %d: %q", i, len(ids), rows[max(0, i-3):min(len(rows), i+3)])
		}
	}
	b.noPageErrors()
}

// recordMany records n events of bulk-agent, one after the other: the
// log lists events by time, ties by id, and events recorded at once could
// commit in another order than their times (newer time, older id), which
// tests reading ids as order would trip on.
func recordMany(t *testing.T, h *harness, n int) {
	t.Helper()
	for i := range n {
		e := audit.Event{Time: h.clock.Now().UTC(), Client: "bulk-agent", User: "alice", Op: "file.read",
			Target: fmt.Sprintf("notes/n%04d.txt", i), Decision: audit.Allow, DecidedBy: audit.ByScope}
		if _, err := h.store.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// detailText waits for the detail dialog to show event id and returns its text.
func (b *browser) detailText(id int64) string {
	b.t.Helper()
	b.wait(fmt.Sprintf(`document.querySelector('#detail').open && [...document.querySelectorAll('#detail dd')].some(dd => dd.textContent === '%d')`, id))
	return js[string](b, `document.querySelector('#detail').innerText`)
}

// The tray's Recent activity opens the dashboard at "#event=ID": the
// activity, with that event's detail open, whether the event is on the
// table's first page, among the newest thousand, or older still (found
// by its time, as audit.query has no id filter); an unknown id says so.
func TestDashboardEventLink(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	one := func(path string) int64 {
		t.Helper()
		rpcCall[any](t, alice, "file.write", m("path", path, "content", "x"))
		p, err := h.store.Query(context.Background(), audit.Filter{Limit: 1})
		if err != nil || len(p.Events) != 1 || p.Events[0].Target != path {
			t.Fatalf("newest event after writing %s: %+v %v", path, p, err)
		}
		return p.Events[0].ID
	}
	far := one("notes/far-back.txt")
	recordMany(t, h, 1050)
	older := one("notes/second-page.txt")
	recordMany(t, h, 150)
	newest := one("notes/newest.txt")

	b := newBrowser(t)
	b.loginAt(h, fmt.Sprintf("#event=%d", newest))
	detail := b.detailText(newest)
	for _, want := range []string{"notes/newest.txt", "alice-agent", "Wrote a file"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail of event %d lacks %q:\n%s", newest, want, detail)
		}
	}
	if got := js[[]string](b, `[location.hash, String(document.querySelector('#view-activity').hidden), document.title]`); got[0] != "#activity" || got[1] != "false" || got[2] != "Corral — Activity" {
		t.Errorf("after #event=: hash, activity hidden, title = %q", got)
	}
	b.shot("event-link-desktop")
	b.do(chromedp.KeyEvent("\x1b"))
	b.wait(`!document.querySelector('#detail').open && document.activeElement.matches('#audit-table tbody tr[data-id="` + fmt.Sprint(newest) + `"]')`)

	// Not among the 100 rows shown: fetched from the log.
	b.hash(fmt.Sprintf("#event=%d", older))
	if d := b.detailText(older); !strings.Contains(d, "notes/second-page.txt") {
		t.Errorf("detail of event %d:\n%s", older, d)
	}
	b.do(chromedp.KeyEvent("\x1b"))
	b.wait(`!document.querySelector('#detail').open && location.hash === '#activity'`)

	// Older than the newest thousand, on a fresh load with the session.
	b.do(chromedp.Navigate("about:blank"), chromedp.Navigate(fmt.Sprintf("%s/#event=%d", h.url, far))) // a load, not a hash change
	if d := b.detailText(far); !strings.Contains(d, "notes/far-back.txt") {
		t.Errorf("detail of event %d:\n%s", far, d)
	}
	b.do(chromedp.KeyEvent("\x1b"))

	// An id the log does not have.
	b.hash("#event=987654")
	b.wait(`[...document.querySelectorAll('#toasts .toast')].some(t => t.textContent.includes('Event 987654 is not in the audit log'))`)
	if js[bool](b, `document.querySelector('#detail').open`) {
		t.Error("a detail is open for an event that does not exist")
	}
	b.noPageErrors()
}

// Coming back to the activity from another view shows what happened
// meanwhile: the first page is loaded again, and when older pages were
// scrolled in, the new events are put on top of them.
func TestDashboardActivityComesBackCurrent(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	n := seed(t, h)
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.wait(fmt.Sprintf(`document.querySelectorAll('#audit-table tbody tr').length === %d`, n))

	b.openTab("rules")
	b.wait(`document.querySelector('#view-activity').hidden`)
	rpcCall[any](t, alice, "file.write", m("path", "notes/while-away.txt", "content", "new"))
	b.openTab("activity")
	b.wait(fmt.Sprintf(`document.querySelector('#audit-table tbody tr .t-target')?.textContent === 'notes/while-away.txt' && document.querySelectorAll('#audit-table tbody tr').length === %d`, n+1))

	// Scrolled into an older page: it stays, the new event goes on top.
	recordMany(t, h, 150)
	b.do(chromedp.Reload())
	b.wait(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === 100`)
	b.click("#load-more") // as scrolling to the end would
	total := n + 1 + 150
	b.wait(fmt.Sprintf(`document.querySelectorAll('#audit-table tbody tr').length === %d`, total))
	b.openTab("approvals")
	rpcCall[any](t, alice, "file.write", m("path", "notes/away-again.txt", "content", "newer"))
	b.openTab("activity")
	b.wait(fmt.Sprintf(`document.querySelector('#audit-table tbody tr .t-target')?.textContent === 'notes/away-again.txt' && document.querySelectorAll('#audit-table tbody tr').length === %d`, total+1))
	ids := js[[]int](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => +tr.dataset.id)`)
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			// The rows' times too, to tell a misplaced row from a repeat.
			rows := js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr')].map(tr => tr.dataset.id + '@' + tr.querySelector('.t-time').title + (tr.classList.contains('fresh') ? ' (fresh)' : ''))`)
			t.Fatalf("rows not newest first without repeats at %d of %d: %q", i, len(ids), rows[max(0, i-3):min(len(rows), i+3)])
		}
	}
	b.noPageErrors()
}

// Refusals by Corral's own file rules inside the agent's own folder (a
// hard-linked file, a FIFO) say what happened, not "outside its folder";
// an escape still says that; the owner's own actions read in words.
func TestDashboardRefusalWording(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "notes/a.txt", "content", "mine"))
	dir := filepath.Join(h.base, "alice", "notes")
	if err := os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "twin.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"notes/twin.txt", "notes/pipe", "../bob/diary.txt"} {
		if e := callErr(t, alice, "file.read", m("path", p)); e.Data.Kind != "denied" {
			t.Fatalf("read %s: %+v", p, e)
		}
	}
	rpcCall[any](t, h.dial(ownerToken), "session.login", nil)

	b := newBrowser(t)
	b.loginAt(h, "#activity?own=1") // the owner's login link is housekeeping, shown on asking
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 5`)
	b.shot("activity-refusals")
	rowOf := func(target string) row {
		t.Helper()
		for _, r := range b.rows() {
			if r.Target == target {
				return r
			}
		}
		t.Fatalf("no row for %s in %+v", target, b.rows())
		return row{}
	}
	for _, c := range []struct{ target, short, head, not string }{
		{"notes/twin.txt", "hard link", "A hard-linked file", "Outside its own folder"},
		{"notes/pipe", "special file", "Not a regular file", "Outside its own folder"},
		{"../bob/diary.txt", "outside its folder", "Outside its own folder", "Inside its own folder"},
	} {
		r := rowOf(c.target)
		if r.Decision != "deny" || !strings.Contains(r.Result, c.short) || strings.Contains(r.Result, "own folder") {
			t.Errorf("row of %s: result %q, want Denied and %q", c.target, r.Result, c.short)
		}
		b.click(`#audit-table tbody tr[data-id="` + r.ID + `"]`)
		b.wait(`document.querySelector('#detail').open`)
		d := js[string](b, `document.querySelector('#detail .decided').innerText`)
		if !strings.Contains(d, "How it was decided: "+c.head) || strings.Contains(d, c.not) {
			t.Errorf("detail of %s says:\n%s\nwant %q, not %q", c.target, d, c.head, c.not)
		}
		if c.target == "notes/twin.txt" {
			b.wait(`document.querySelector('#detail').open`)
			if n := js[int](b, `document.querySelectorAll('#detail .file-actions button').length`); n != 0 {
				t.Errorf("the detail of a refused hard link offers %d buttons to open or share it", n)
			}
			b.shot("detail-hard-link")
		}
		b.do(chromedp.KeyEvent("\x1b"))
		b.wait(`!document.querySelector('#detail').open`)
	}

	// session.login: in words, for all scopes, done by the owner.
	login := rowOf("dashboard")
	cells := js[[]string](b, `(() => { const tr = document.querySelector('#audit-table tbody tr[data-id="`+login.ID+`"]');
		return [tr.querySelector('.t-op').textContent, tr.querySelector('.t-user').textContent]; })()`)
	if cells[0] != "Made a login link" || cells[1] != "All folders" {
		t.Errorf("session.login row: action %q, scope %q", cells[0], cells[1])
	}
	if opt := js[string](b, `document.querySelector('#f-op option[value="session.login"]')?.textContent || ''`); opt != "Made a login link (session.login)" {
		t.Errorf("session.login in the action filter: %q", opt)
	}
	b.click(`#audit-table tbody tr[data-id="` + login.ID + `"]`)
	b.wait(`document.querySelector('#detail').open`)
	d := js[string](b, `document.querySelector('#detail').innerText`)
	b.shot("detail-session-login")
	if !strings.Contains(d, "for all folders. Corral allowed it.") || strings.Contains(d, "— scope") || strings.Contains(d, "Corral asked") {
		t.Errorf("session.login detail:\n%s", d)
	}
	b.noPageErrors()
}

// waitDownload waits for a finished download with the given extension in
// dir and returns its content.
func waitDownload(t *testing.T, dir, ext string) string {
	t.Helper()
	var b []byte
	poll.Eventually(t, callWithin, func() bool {
		names, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
		if len(names) != 1 {
			return false
		}
		b, _ = os.ReadFile(names[0])
		if len(b) == 0 { // Chromium can name the file before it writes it (seen under load)
			return false
		}
		os.Remove(names[0])
		return true
	}, "a %s download in %s", ext, dir)
	return string(b)
}

// waitTarget waits until some tab of b's BrowserContext shows url (a link opened with noopener
// has no opener to wait on).
func waitTarget(t *testing.T, b *browser, prefix string) {
	t.Helper()
	poll.Eventually(t, callWithin, func() bool {
		ts, err := chromedp.Targets(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ts, func(x *target.Info) bool {
			return x.Type == "page" && x.BrowserContextID == b.id && strings.HasPrefix(x.URL, prefix)
		})
	}, "a tab to open %s…", prefix)
}

func TestDashboardApprovals(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h, outside := startWithOutsideText(t)
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	// The page subscribes on connect, then lists what is pending.
	b.wait(`!document.querySelector('#approvals-empty').hidden && document.body.dataset.approvalsReady`)

	// Answered in the page: the agent's blocked call goes through.
	done := async(alice, "file.read", m("path", outside, "reason", "summarise my taxes"))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	card := js[string](b, `document.querySelector('.approval').innerText`)
	for _, want := range []string{"alice-agent", outside, "summarise my taxes", "Denied automatically in", "In alice’s folder"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(strings.ToLower(card), "scope") {
		t.Errorf("card says \"scope\":\n%s", card)
	}
	// The buttons are policy's one table, exactly: the allow row, then
	// the deny row; only the default (Allow once) is the strong button.
	var table [2][]string
	for _, c := range policy.AllChoices() {
		row := 1
		if c.Allows {
			row = 0
		}
		table[row] = append(table[row], c.Label+"|"+string(c.Decision))
	}
	rows := js[[][]string](b, `[...document.querySelectorAll('.approval .decisions .row')].map((r) => [...r.querySelectorAll('button')].map((x) => x.textContent + '|' + x.dataset.decision))`)
	if len(rows) != 2 || !slices.Equal(rows[0], table[0]) || !slices.Equal(rows[1], table[1]) {
		t.Errorf("button rows %q, want %q", rows, table)
	}
	if strong := js[[]string](b, `[...document.querySelectorAll('.approval .decisions .btn.allow, .approval .decisions .btn.deny')].map((x) => x.dataset.decision)`); !slices.Equal(strong, []string{"allow_once"}) {
		t.Errorf("strong buttons %q, want only allow_once", strong)
	}
	if got := js[[]string](b, `[document.title, document.querySelector('#pending-badge').textContent, String(document.querySelector('#pending-badge').hidden)]`); got[0] != "(1) Corral — Approvals" || got[1] != "1" || got[2] != "false" {
		t.Errorf("title and badge: %q", got)
	}
	b.shot("approval-desktop")
	b.labelled()
	b.phone()
	b.shot("approval-phone")
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("approvals page is %dpx wide at 390px", w)
	}
	b.dark(true)
	b.shot("approval-phone-dark")
	b.dark(false)
	b.desktop()
	b.click(`.approval button[data-decision="allow_once"]`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read after Allow once in the page: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's call is still blocked after Allow once")
	}
	b.wait(`document.querySelectorAll('.approval').length === 0 && document.title === 'Corral — Approvals' && document.querySelector('#pending-badge').hidden`)

	// Answered elsewhere: the card disappears at once.
	own := h.owner(t)
	done = async(alice, "file.read", m("path", outside))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	a := own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	b.wait(`document.querySelectorAll('.approval').length === 0`)
	if err := <-done; err == nil || err.(*client.Error).Data.Kind != "denied" {
		t.Fatalf("after deny elsewhere: %v", err)
	}

	// Always allow the folder for 7 days: a rule appears on the Rules page.
	done = async(alice, "file.read", m("path", outside))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	b.click(`.approval input[type=checkbox]`)
	b.choose(`.approval select`, "7d")
	b.click(`.approval button[data-decision="allow_always"]`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rules := rpcCall[struct {
		Rules []struct{ ID, Target, Match string }
	}](t, own.c, "rule.list", nil)
	if len(rules.Rules) != 1 || rules.Rules[0].Target != filepath.Dir(outside) || rules.Rules[0].Match != "prefix" {
		t.Fatalf("rules after Always allow + folder: %+v", rules)
	}
	b.openTab("rules")
	b.wait(`document.querySelectorAll('#rule-list .rule').length === 1`)
	rule := js[string](b, `document.querySelector('#rule-list .rule').innerText`)
	for _, want := range []string{filepath.Dir(outside), "Allow", "alice-agent", "by you", "expires in 7 days"} {
		if !strings.Contains(rule, want) {
			t.Errorf("rule card lacks %q:\n%s", want, rule)
		}
	}
	b.shot("rules-desktop")
	b.phone()
	b.shot("rules-phone")
	b.desktop()
	b.click(`#rule-list .rule button`)
	b.click(`#rule-list .rule button.confirming`)
	b.wait(`document.querySelectorAll('#rule-list .rule').length === 0 && !document.querySelector('#rules-empty').hidden`)
	if r := rpcCall[struct{ Rules []any }](t, own.c, "rule.list", nil); len(r.Rules) != 0 {
		t.Errorf("rules after Revoke: %v", r.Rules)
	}

	// Pause and resume.
	b.click("#pause")
	b.wait(`document.querySelector('#pause').getAttribute('aria-pressed') === 'true' && !document.querySelector('#paused-banner').hidden`)
	if info := rpcCall[struct{ Paused bool }](t, own.c, "session.info", nil); !info.Paused {
		t.Error("session.info does not say paused after Pause")
	}
	b.shot("paused-desktop")
	b.click("#pause")
	b.wait(`document.querySelector('#pause').getAttribute('aria-pressed') === 'false' && document.querySelector('#paused-banner').hidden`)
	// Paused elsewhere: the page follows through the audit log.
	rpcCall[any](t, own.c, "agents.pause", nil)
	b.wait(`document.querySelector('#pause').getAttribute('aria-pressed') === 'true'`)
	rpcCall[any](t, own.c, "agents.resume", nil)
	b.wait(`document.querySelector('#pause').getAttribute('aria-pressed') === 'false'`)

	// Opened with something waiting, the dashboard starts on the approvals.
	done = async(alice, "file.read", m("path", outside))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	b.do(chromedp.Navigate(h.url + "/"))
	b.wait(`location.hash === '#approvals' && document.querySelectorAll('.approval').length === 1`)
	b.click(`.approval button[data-decision="deny_once"]`)
	if err := <-done; err == nil {
		t.Error("read allowed after Deny")
	}
	b.noPageErrors()
}

// One-time-only approvals (an asked command) offer only Allow once and Deny.
func TestDashboardOneTimeApproval(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "[exec]\nask = true\n")
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	b.wait(`document.body.dataset.approvalsReady`)
	type run struct {
		Stdout string
		err    error
	}
	done := make(chan run, 1)
	go func() {
		var r run
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.err = alice.CallInto(ctx, "command.run", m("command", "echo asked"), &r)
		done <- r
	}()
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	got := js[[]string](b, `[...document.querySelectorAll('.approval .decisions button')].map(x => x.textContent)`)
	if strings.Join(got, "|") != "Allow once|Deny" {
		t.Errorf("one-time-only buttons: %q", got)
	}
	if n := js[int](b, `document.querySelectorAll('.approval input:not(.deny-reason), .approval select').length`); n != 0 {
		t.Errorf("one-time-only card has %d remember options", n)
	}
	b.shot("approval-once-desktop")
	b.click(`.approval button[data-decision="allow_once"]`)
	if r := <-done; r.err != nil || r.Stdout != "asked\n" {
		t.Errorf("command after Allow once: %+v", r)
	}

	// Network for a command: the access chip reads as a phrase.
	online := async(alice, "command.run", m("command", "echo online", "network", true))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	b.click(`.approval button[data-decision="allow_once"]`) // the command itself
	b.wait(`document.querySelectorAll('.approval.network').length === 1`)
	if chip := js[string](b, `document.querySelector('.approval .chip.access').textContent`); chip != "network access" {
		t.Errorf("network access chip %q", chip)
	}
	b.shot("approval-network-desktop")
	b.click(`.approval button[data-decision="deny_once"]`)
	if err := <-online; err == nil {
		t.Error("command with network ran after Deny")
	}
	b.noPageErrors()
}

func TestDashboardFiles(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	seed(t, h)
	b := newBrowser(t)
	b.login(h)
	b.hash("#files?place=alice")
	b.wait(`document.querySelectorAll('#listing .entry').length >= 2`)
	names := js[[]string](b, `[...document.querySelectorAll('#listing .entry')].map(li => li.dataset.path)`)
	if names[0] != "output" || !strings.Contains(js[string](b, `document.querySelector('#listing .entry').innerText`), "Made by agents") {
		t.Errorf("alice's folder, output first: %q", names)
	}
	places := js[string](b, `document.querySelector('#places').innerText`)
	for _, want := range []string{"Shared folder", "alice", "bob", "Companion", "Default"} {
		if !strings.Contains(places, want) {
			t.Errorf("places lack %q: %s", want, places)
		}
	}
	b.shot("files-desktop")
	b.labelled()
	b.click(`#listing .entry.output .name a`)
	b.wait(`location.hash.includes('path=output') && document.querySelectorAll('#listing .entry.file').length === 1`)
	report := js[string](b, `document.querySelector('#listing .entry.file').dataset.path`)
	if !strings.HasPrefix(report, "output/report_") {
		t.Fatalf("report entry %q", report)
	}
	// A link to copy.
	b.click(`#listing .entry.file .acts button[aria-label^="Make a link"]`)
	b.wait(`document.querySelector('#share').open`)
	b.click(`#share .detail-actions .btn.primary`)
	b.wait(`document.querySelector('#share-url')?.value.startsWith(` + jsString(h.url+"/files/out?path="+report) + `)`)
	link := js[string](b, `document.querySelector('#share-url').value`)
	resp, body := get(t, link)
	if resp.StatusCode != 200 || !strings.Contains(body, "All quiet.") {
		t.Errorf("GET the copied link: %d %q", resp.StatusCode, body)
	}
	b.shot("share-desktop")
	b.click(`#share-close`)
	// Open through a fresh link, in a new tab.
	b.click(`#listing .entry.file .acts button[aria-label^="Open"]`)
	waitTarget(t, b, h.url+"/files/out?path="+report)
	// The shared folder.
	b.click(`#places a[href="#files?place=share"]`)
	b.wait(`[...document.querySelectorAll('#listing .entry')].some(li => li.dataset.path === 'share/plan.txt')`)
	b.phone()
	b.shot("files-phone")
	b.noPageErrors()

	// Sign out: back to the page that says how to open the dashboard, and
	// the cookie no longer opens it.
	b.desktop()
	b.click(".signout button")
	b.wait(`document.body.classList.contains('signed-out') && document.body.innerText.includes('corral open')`)
	b.shot("signed-out")
	b.do(chromedp.Navigate(h.url + "/"))
	b.wait(`document.body.classList.contains('signed-out')`)
}

// The Devices page: "Pair a phone" draws the pairing link as a QR code,
// a phone paired with that code shows up in the list, Revoke removes it,
// and a paired device's own session is not offered the page. The LAN
// listener is only bound: every request goes to the loopback URL.
func TestDashboardDevices(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "[server]\nlan = true\n")
	b := newBrowser(t)
	b.login(h)
	b.openTab("devices")
	b.wait(`document.body.dataset.devicesReady && !document.querySelector('#devices-empty').hidden`)
	if title := js[string](b, `document.title`); title != "Corral — Devices" {
		t.Errorf("title %q", title)
	}

	// Before the LAN listener is up, the server's sentence says why not.
	b.click("#pair-start")
	b.wait(`!document.querySelector('#pair-problem').hidden && document.querySelector('#pair-body').hidden`)
	if got := js[string](b, `document.querySelector('#pair-problem-text').textContent`); !strings.Contains(got, "Turn on the LAN") {
		t.Errorf("unavailable sentence %q", got)
	}
	b.shot("devices-unavailable-desktop")
	lan, err := h.srv.ListenLAN() // binds only; no traffic goes to the LAN address
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	defer lan.Close()

	b.click("#pair-retry")
	b.wait(`document.querySelector('#pair-qr svg path.qr-dark') && document.querySelector('#pair-url').value.includes('/pair?code=') && document.querySelector('#pair-problem').hidden`)
	link := js[string](b, `document.querySelector('#pair-url').value`)
	h.srv.mu.Lock()
	lanURL := h.srv.lanURL
	h.srv.mu.Unlock()
	if !strings.HasPrefix(link, lanURL+"/pair?code=") {
		t.Fatalf("pairing link %q, want one on %s", link, lanURL)
	}
	checkQR(t, b, link)
	if left := js[string](b, `document.querySelector('#pair-left').textContent`); !regexp.MustCompile(`^[45]:\d\d$`).MatchString(left) {
		t.Errorf("countdown %q", left)
	}
	if px := js[[]float64](b, `(() => { const r = document.querySelector('#pair-qr svg').getBoundingClientRect(); return [r.width, r.height]; })()`); px[0] < 200 || px[0] != px[1] {
		t.Errorf("QR code drawn %v px", px)
	}
	b.shot("devices-pair-desktop")
	// Between phone and desktop widths the five tabs and the header's
	// buttons still fit.
	for _, wd := range []int64{660, 900, 1050} {
		b.do(chromedp.EmulateViewport(wd, 800))
		if w := js[int64](b, `document.documentElement.scrollWidth`); w > wd {
			t.Errorf("page is %dpx wide at %dpx", w, wd)
		}
	}
	b.desktop()
	b.labelled()
	b.phone()
	b.shot("devices-pair-phone")
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("devices page is %dpx wide at 390px", w)
	}
	if px := js[float64](b, `document.querySelector('#pair-qr svg').getBoundingClientRect().width`); px < 200 {
		t.Errorf("QR code only %vpx wide on a phone", px)
	}
	b.desktop()
	b.click("#pair-copy")
	b.wait(`[...document.querySelectorAll('#toasts .toast')].some(t => /Link copied|Select the link/.test(t.textContent))`)
	// A code that runs out is blurred and says so (made five minutes in the
	// past, it expires the moment it arrives).
	h.clock.Shift(-5*time.Minute - time.Second)
	b.click("#pair-new")
	b.wait(`document.querySelector('#pair-card').classList.contains('expired') && !document.querySelector('#pair-expired').hidden && document.querySelector('#pair-countdown').hidden`)
	h.clock.Shift(0)
	if n := js[int](b, `document.querySelectorAll('#pair-card .pair-link input').length && document.querySelector('#pair-card .pair-link').offsetParent === null ? 1 : 0`); n != 1 {
		t.Error("the link of an expired code is still offered")
	}
	b.shot("devices-pair-expired-desktop")
	// New code asks for another.
	b.click("#pair-new")
	b.wait(`document.querySelector('#pair-url').value !== ` + jsString(link) + ` && !document.querySelector('#pair-card').classList.contains('expired') && !document.querySelector('#pair-countdown').hidden`)
	link = js[string](b, `document.querySelector('#pair-url').value`)
	checkQR(t, b, link)

	// The phone names itself with the code (POST /pair, over loopback):
	// the page notices, closes the spent code and lists the phone.
	code, _, _ := strings.Cut(link[strings.Index(link, "code=")+len("code="):], "#") // the fragment is the certificate's fingerprint
	resp, dev := pair(t, h, code, "Kitchen phone")
	if resp.StatusCode != 200 || dev["token"] == "" {
		t.Fatalf("pair: %d %v", resp.StatusCode, dev)
	}
	b.wait(`[...document.querySelectorAll('#device-list .device .name')].map(n => n.textContent).join() === 'Kitchen phone' && document.querySelector('#pair-card').hidden && document.querySelector('#devices-empty').hidden`)
	row := js[string](b, `document.querySelector('#device-list .device').innerText`)
	for _, want := range []string{"Kitchen phone", "paired just now", "last seen just now", "Revoke"} {
		if !strings.Contains(row, want) {
			t.Errorf("device row lacks %q:\n%s", want, row)
		}
	}
	b.shot("devices-desktop")
	b.labelled()
	b.phone()
	b.shot("devices-phone")
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("device list is %dpx wide at 390px", w)
	}
	b.dark(true)
	b.shot("devices-phone-dark")
	b.dark(false)
	b.desktop()

	// Revoke asks for a second click; then the phone is gone for good.
	b.click(`#device-list .device button`)
	if n := js[int](b, `document.querySelectorAll('#device-list .device').length`); n != 1 {
		t.Fatalf("one click revoked: %d devices", n)
	}
	b.click(`#device-list .device button.confirming`)
	b.wait(`document.querySelectorAll('#device-list .device').length === 0 && !document.querySelector('#devices-empty').hidden`)
	owner := h.dial(ownerToken)
	if l := rpcCall[struct{ Devices []any }](t, owner, "device.list", nil); len(l.Devices) != 0 {
		t.Errorf("devices after Revoke: %v", l.Devices)
	}
	if resp, _ := get(t, h.url+"/", "Cookie", deviceCookie+"="+dev["token"]); resp.StatusCode != 401 {
		t.Errorf("revoked device opens the dashboard: %d", resp.StatusCode)
	}
	b.noPageErrors()

	// A paired device's own session: no Devices tab, and #devices lands
	// on the activity.
	other := rpcCall[struct{ Code string }](t, owner, "pairing.start", nil)
	if resp, dev = pair(t, h, other.Code, "Hall tablet"); resp.StatusCode != 200 {
		t.Fatalf("pair the tablet: %d", resp.StatusCode)
	}
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetCookie, network.SetCookieParams{Name: deviceCookie, Value: dev["token"], URL: h.url + "/"}); err != nil {
		t.Fatal(err)
	}
	// The device's second secret, as pair.js keeps it; the owner's tab
	// secret goes, so the page speaks as the device.
	b.do(chromedp.Navigate(h.url + "/healthz"))
	js[any](b, `sessionStorage.clear(), localStorage.setItem('corral.device', `+jsString(dev["secret"])+`)`)
	b.do(chromedp.Navigate("about:blank"), chromedp.Navigate(h.url+"/#devices")) // a load, not a hash change
	b.wait(`document.body.dataset.infoReady && document.querySelector('#conn').dataset.state === 'open' && location.hash === '#activity'`)
	// The About line names Corral's version, as corral --version does.
	if got := js[string](b, `document.querySelector('#about').textContent`); !strings.Contains(got, "Corral "+testVersion) {
		t.Errorf("About line: %q, want it to name Corral %s", got, testVersion)
	}
	if got := js[[]bool](b, `[document.querySelector('.tab[data-tab="devices"]').hidden, document.querySelector('#view-devices').hidden, document.querySelector('#view-activity').hidden]`); !got[0] || !got[1] || got[2] {
		t.Errorf("device session: devices tab hidden %v, view hidden %v, activity hidden %v", got[0], got[1], got[2])
	}
	b.phone()
	b.shot("device-session-phone")
	b.noPageErrors()
}

// checkQR reads the QR code drawn on the Devices page and compares it,
// module by module, with the code of link, quiet zone included.
func checkQR(t *testing.T, b *browser, link string) {
	t.Helper()
	drawn := js[struct {
		ViewBox, D string
	}](b, `(() => { const svg = document.querySelector('#pair-qr svg'); return {ViewBox: svg.getAttribute('viewBox'), D: svg.querySelector('path.qr-dark').getAttribute('d')}; })()`)
	want, err := qrRows(link)
	if err != nil {
		t.Fatal(err)
	}
	n, quiet := len(want), 4
	side := n + 2*quiet
	if drawn.ViewBox != fmt.Sprintf("0 0 %d %d", side, side) {
		t.Fatalf("viewBox %q for %d modules and a quiet zone of %d", drawn.ViewBox, n, quiet)
	}
	got := make([][]byte, side)
	for y := range got {
		got[y] = []byte(strings.Repeat("0", side))
	}
	for _, r := range regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).FindAllStringSubmatch(drawn.D, -1) {
		var x, y, w int
		fmt.Sscan(r[1]+" "+r[2]+" "+r[3], &x, &y, &w)
		for i := range w {
			got[y][x+i] = '1'
		}
	}
	for y := range side {
		for x := range side {
			exp := byte('0')
			if x >= quiet && y >= quiet && x < quiet+n && y < quiet+n {
				exp = want[y-quiet][x-quiet]
			}
			if got[y][x] != exp {
				t.Fatalf("QR module (%d,%d) drawn %c, want %c", x, y, got[y][x], exp)
			}
		}
	}
}

func jsString(s string) string { return chromium.Quote(s) }

func TestDashboardServing(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	// Without a session: the short page saying how to open the dashboard.
	resp, body := get(t, h.url+"/")
	if resp.StatusCode != 401 || !strings.Contains(body, "corral open") || strings.Contains(body, "app.js") {
		t.Errorf("GET / without a session: %d %s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	// With a session: the app, its files under a versioned path that
	// browsers may cache for good.
	owner := h.dial(ownerToken)
	login := rpcCall[struct{ URL string }](t, owner, "session.login", nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	lr, err := noRedirect.Get(login.URL)
	if err != nil {
		t.Fatal(err)
	}
	lr.Body.Close()
	var session *http.Cookie
	for _, c := range lr.Cookies() {
		if c.Name == cookieName {
			session = c
		}
	}
	if lr.StatusCode != http.StatusOK || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookie %+v", lr.StatusCode, session)
	}
	resp, body = get(t, h.url+"/", "Cookie", cookieName+"="+session.Value)
	ver := uiAssets().version
	if resp.StatusCode != 200 || !strings.Contains(body, `src="/ui/v-`+ver+`/js/app.js"`) || resp.Header.Get("Content-Security-Policy") != uiCSP || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET / with a session: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = get(t, h.url+"/ui/v-"+ver+"/js/lib/rpc.js")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("versioned asset: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = get(t, h.url+"/ui/v-0000/js/lib/rpc.js")
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("asset of another version: %d %v", resp.StatusCode, resp.Header)
	}
	// Sign out ends the session.
	req, _ := http.NewRequest("POST", h.url+"/logout", strings.NewReader("secret="+h.srv.secretFor("session", session.Value)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookieName+"="+session.Value)
	req.Header.Set("Origin", h.url)
	if r, err := noRedirect.Do(req); err != nil || r.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %v %v", r, err)
	}
	if resp, _ = get(t, h.url+"/", "Cookie", cookieName+"="+session.Value); resp.StatusCode != 401 {
		t.Errorf("GET / after logout: %d", resp.StatusCode)
	}

	// Static files: typed, revalidated by ETag; the shell only at /.
	resp, body = get(t, h.url+"/ui/js/app.js")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || resp.Header.Get("ETag") == "" || !strings.Contains(body, "import") {
		t.Fatalf("GET app.js: %d %v", resp.StatusCode, resp.Header)
	}
	if r, _ := get(t, h.url+"/ui/js/app.js", "If-None-Match", resp.Header.Get("ETag")); r.StatusCode != 304 {
		t.Errorf("revalidation: %d", r.StatusCode)
	}
	for _, p := range []string{"/ui/index.html", "/ui/v-" + ver + "/index.html", "/ui/", "/ui/nope.js", "/ui/../server.go", "/ui/%2e%2e/embed.go", "/ui/v-" + ver + "/../../server.go"} {
		if r, _ := get(t, h.url+p); r.StatusCode != 404 && r.StatusCode != 400 && r.StatusCode != 301 {
			t.Errorf("GET %s: %d", p, r.StatusCode)
		}
	}
	// Inline code or markup from strings would break the CSP: every script
	// and style is a file, and no script turns a string into markup or code.
	err = fs.WalkDir(assets.Web, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(assets.Web, p)
		if err != nil {
			return err
		}
		var bad []string
		switch path.Ext(p) {
		case ".html":
			bad = []string{"<script>", "style=", "<style", "javascript:"}
			if m := regexp.MustCompile(`\son[a-z]+=`).FindString(string(data)); m != "" {
				t.Errorf("%s has an inline handler %q", p, m)
			}
		case ".js":
			bad = []string{"innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval(", "new Function", ".style ="}
		}
		for _, b := range bad {
			if strings.Contains(string(data), b) {
				t.Errorf("%s contains %q", p, b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFilesOutPageCannotUseSession checks that an HTML page an agent saved
// and the owner opens from /files/out, while signed in to the dashboard on
// the same origin, can neither read the session cookie nor open /ws with
// it: /files/out answers with CSP sandbox, so the page runs (if at all)
// with an opaque origin, and the server refuses its Origin.
func TestFilesOutPageCannotUseSession(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	host := strings.TrimPrefix(h.url, "http://")
	// The agent's script: what it manages to see goes into the DOM.
	probe := `(async () => {
		const out = {ran: true, origin: String(self.origin)};
		try { out.cookie = document.cookie; } catch (e) { out.cookie = 'threw ' + e.name; }
		out.ws = await new Promise((done) => {
			try {
				const ws = new WebSocket('ws://` + host + `/ws');
				ws.onopen = () => done('open');
				ws.onerror = () => done('error');
			} catch (e) { done('threw ' + e.name); }
		});
		try { const r = await fetch('/ws'); out.fetch = 'status ' + r.status; } catch (e) { out.fetch = 'threw ' + e.name; }
		try { const r = await fetch('/', {credentials: 'include'}); out.home = 'status ' + r.status; } catch (e) { out.home = 'threw ' + e.name; }
		return JSON.stringify(out);
	})()`
	page := `<!DOCTYPE html><html><head><title>Agent report</title></head><body><h1>Agent report</h1>
<pre id="probe">the script did not run</pre>
<script>document.documentElement.dataset.ran = 'yes'; ` + probe + `.then(r => { document.getElementById('probe').textContent = r; });</script>
</body></html>`
	alice := h.dial(aliceKey)
	res := rpcCall[map[string]string](t, alice, "result.save", m("title", "report", "content", page, "format", "html"))

	b := newBrowser(t)
	b.login(h) // the owner is signed in: the session cookie exists for this origin
	if js[string](b, `document.cookie`) != "" {
		t.Error("the dashboard itself can read its session cookie (it must be HttpOnly)")
	}
	cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{h.url + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var session string
	for _, c := range cookies.Cookies {
		if c.Name == cookieName {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatalf("no %s cookie in the browser after login: %+v", cookieName, cookies.Cookies)
	}

	// Leave the dashboard so its own connection closes; from now on no
	// connection may open beyond the test's own (alice's).
	const base = 1
	b.do(chromedp.Navigate("about:blank"))
	poll.EventuallyNil(t, callWithin, func() error {
		if c := h.srv.Connections(); c != base {
			return fmt.Errorf("%d connections, want %d", c, base)
		}
		return nil
	}, "the dashboard's connection to close once the page is left")
	var opened atomic.Int32
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if h.srv.Connections() > base {
				opened.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
	}()

	b.do(chromedp.Navigate(res["url"]))
	// Once the document has loaded, its inline script has run or never
	// will: scripts run as the parser reaches them, before the load event.
	b.wait(`document.readyState === 'complete' && document.querySelector('h1')?.textContent === 'Agent report'`)
	// The agent's own script: under plain CSP sandbox it does not run at
	// all. Should it ever run, what it saw must be nothing.
	if js[string](b, `document.documentElement.dataset.ran ?? ''`) == "yes" {
		b.wait(`document.getElementById('probe').textContent !== 'the script did not run'`)
		checkProbe(t, js[string](b, `document.getElementById('probe').textContent`))
	}
	// What any code in this document sees, asked from DevTools (which CSP
	// does not stop): an opaque origin and no cookie. A WebSocket made
	// here is sent by the browser with Origin: null, and never opens.
	in := js[[]string](b, `(() => {
		let cookie;
		try { cookie = 'read: ' + document.cookie; } catch (e) { cookie = 'threw ' + e.name; }
		window.probeWS = new WebSocket('ws://`+host+`/ws');
		return [String(self.origin), cookie];
	})()`)
	t.Logf("in the report's context: origin %q, cookie %q", in[0], in[1])
	if in[0] != "null" {
		t.Errorf("the report's origin is %q, want the opaque null", in[0])
	}
	if in[1] != "threw SecurityError" && in[1] != "read: " {
		t.Errorf("document.cookie in the report: %q", in[1])
	}
	state := -1
	poll.Eventually(t, 10*time.Second, func() bool {
		state = js[int](b, `window.probeWS.readyState`)
		return state > 1
	}, "the WebSocket from the report to end (readyState 2 or 3)")
	if state != 3 { // CLOSED; OPEN would be 1
		t.Errorf("WebSocket from the report: readyState %d, want 3 (closed, refused)", state)
	}
	close(stop)
	<-watched
	if n := opened.Load(); n > 0 || h.srv.Connections() > base {
		t.Errorf("a /ws connection opened while the agent's page was shown (%d samples)", n)
	}
	b.shot("files-out-report")

	// The same upgrade at the HTTP level, with the owner's live cookie:
	// refused for the sandboxed page's Origin (null), accepted for the
	// dashboard's own, so it is the origin, not a stale cookie, that stops it.
	dialWS := func(origin string) int {
		hdr := http.Header{"Cookie": {cookieName + "=" + session}, "Origin": {origin}}
		d := websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + h.srv.secretFor("session", session)}}
		ws, resp, err := d.Dial("ws://"+host+"/ws", hdr)
		if err == nil {
			ws.Close()
		}
		if resp == nil {
			t.Fatalf("dial with Origin %s: %v", origin, err)
		}
		return resp.StatusCode
	}
	if code := dialWS("null"); code != http.StatusForbidden {
		t.Errorf("upgrade with the session cookie and Origin: null answered %d, want 403", code)
	}
	if code := dialWS(h.url); code != http.StatusSwitchingProtocols {
		t.Errorf("control: upgrade with the session cookie from the dashboard's origin answered %d, want 101", code)
	}
}

func checkProbe(t *testing.T, raw string) {
	t.Helper()
	var got struct {
		Ran                             bool
		Origin, Cookie, WS, Fetch, Home string
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("the page's script wrote %q: %v", raw, err)
	}
	t.Logf("the page's script ran and saw %+v", got)
	if got.Origin != "null" {
		t.Errorf("page script: origin %q, want the opaque null", got.Origin)
	}
	if strings.Contains(got.Cookie, cookieName) || !(got.Cookie == "" || strings.HasPrefix(got.Cookie, "threw")) {
		t.Errorf("page script read the cookie: %q", got.Cookie)
	}
	if got.WS != "error" && !strings.HasPrefix(got.WS, "threw") {
		t.Errorf("page script: WebSocket to /ws: %q", got.WS)
	}
	if !strings.HasPrefix(got.Fetch, "threw") || !strings.HasPrefix(got.Home, "threw") {
		t.Errorf("page script: fetch /ws %q, fetch / %q", got.Fetch, got.Home)
	}
}

// BenchmarkDashboard1M measures the dashboard against 1,000,000 events:
// first_page_ms is from navigation start until the chart and the first
// 100 rows are drawn (the page's own performance mark); filter_ms is from
// a filter change until the table and the chart show its answer. Only
// runs with -bench (building the database takes a while).
func BenchmarkDashboard1M(b *testing.B) {
	dir := b.TempDir()
	db := harnessFiles(dir).DB
	os.MkdirAll(filepath.Dir(db), 0o700)
	if err := buildDashboardBenchDB(db, 1_000_000); err != nil {
		b.Fatal(err)
	}
	h := startIn(b, dir, "")
	br := newBrowser(b)
	owner := h.dial(ownerToken)
	var r struct{ URL string }
	if err := owner.CallInto(context.Background(), "session.login", nil, &r); err != nil {
		b.Fatal(err)
	}
	br.do(chromedp.Navigate(r.URL))
	br.wait(`document.body.dataset.auditReady`)

	if os.Getenv("CORRAL_BENCH_DEBUG") != "" {
		since := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Hour).Format(time.RFC3339)
		for _, c := range []struct {
			m string
			p map[string]any
		}{
			{"audit.query", m("limit", 100)},
			{"audit.stats", m("since", since, "bucket", "hour")},
			{"audit.query", m("limit", 100, "decision", "deny")},
			{"audit.stats", m("since", since, "bucket", "hour", "decision", "deny")},
			{"audit.query", m("limit", 100, "client", "zed")},
			{"audit.stats", m("since", since, "bucket", "hour", "client", "zed")},
			{"audit.stats", m("since", since, "bucket", "hour", "op", "file.write")},
		} {
			for range 3 {
				t0 := time.Now()
				if _, err := owner.Call(context.Background(), c.m, c.p); err != nil {
					b.Fatal(err)
				}
				b.Logf("%s %v: %v", c.m, c.p, time.Since(t0))
			}
		}
	}
	changes := []struct{ sel, value string }{
		{"#f-decision", "deny"}, {"#f-decision", ""},
		{"#f-client", "zed"}, {"#f-client", ""},
		{"#f-op", "file.write"}, {"#f-op", ""},
		{"#f-range", "24h"}, {"#f-range", ""},
	}
	// firstPage reloads the activity view and returns the page's own time
	// from navigation start to the first 100 rows and the chart painted.
	firstPage := func() float64 {
		br.hash("#activity")
		br.do(chromedp.Reload())
		ms := js[float64](br, `new Promise((done) => {
			const ready = () => done(performance.getEntriesByName('corral:audit-ready')[0].startTime);
			if (document.body.dataset.auditReady) ready(); else document.addEventListener('corral:audit-ready', ready, {once: true});
		})`)
		if n := js[int](br, `document.querySelectorAll('#audit-table tbody tr').length`); n != 100 {
			b.Fatalf("%d rows on the first page", n)
		}
		if os.Getenv("CORRAL_BENCH_DEBUG") != "" {
			b.Logf("marks: %s", js[string](br, `JSON.stringify([...performance.getEntriesByType('mark').map(m => [m.name, Math.round(m.startTime)]), ['dcl', Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd)]])`))
		}
		return ms
	}
	// Once with an empty cache, as on the very first visit.
	if _, err := chromedp.Call(br.ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		b.Fatal(err)
	}
	cold := firstPage()

	var first, filter []float64
	i := 0
	for b.Loop() {
		first = append(first, firstPage())
		for range 2 {
			c := changes[i%len(changes)]
			i++
			ms := js[float64](br, fmt.Sprintf(`new Promise((done) => {
				const t0 = performance.now();
				document.addEventListener('corral:audit-ready', () => done(performance.now() - t0), {once: true});
				const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event('change', {bubbles: true}));
			})`, c.sel, c.value))
			filter = append(filter, ms)
		}
	}
	b.ReportMetric(cold, "cold_first_page_ms")
	b.ReportMetric(mean(first), "first_page_ms")
	b.ReportMetric(mean(filter), "filter_ms")
	b.ReportMetric(maxOf(first), "first_page_max_ms")
	b.ReportMetric(maxOf(filter), "filter_max_ms")
	br.shot("bench-activity-1m")
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(max(1, len(xs)))
}

func maxOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// buildDashboardBenchDB writes n varied events over the last 30 days in
// one transaction, straight into the store's table.
func buildDashboardBenchDB(path string, n int) error {
	st, err := store.Open(path, store.Options{}) // creates the schema
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(`INSERT INTO audit_events (time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	clients := []string{"claude", "claude", "claude", "codex", "codex", "cursor", "phone", "aider", "zed", "goose"}
	users := []string{"default", "default", "alice", "alice", "bob", "companion"}
	ops := []string{"file.read", "file.read", "file.read", "file.stat", "folder.list", "file.grep", "file.find", "file.write", "file.edit", "command.run", "link.create", "files.out"}
	end := time.Now()
	span := 30 * 24 * time.Hour
	step := span / time.Duration(n)
	t := end.Add(-span)
	for i := range n {
		t = t.Add(step)
		decision, by, detail, errText := "allow", "scope", "", ""
		switch r := rng.IntN(100); {
		case r < 6:
			decision, by, detail = "deny", "rule", fmt.Sprintf("rule ru_%d", rng.IntN(40))
		case r < 9:
			decision, errText = "error", "no such file or directory"
		}
		op := pick(ops)
		target := fmt.Sprintf("share/projects/p%d/src/file%d.go", rng.IntN(50), rng.IntN(2000))
		if op == "command.run" {
			target, detail = "playground", fmt.Sprintf("go test ./pkg%d/...", rng.IntN(30))
		}
		if _, err := stmt.Exec(t.UnixNano(), pick(clients), pick(users), op, target, decision, by, detail,
			rng.Int64N(1<<20), rng.Int64N(500), errText); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.Exec("PRAGMA analysis_limit = 1000; ANALYZE; PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// TestDashboardRiskyApprovals: a target holding secrets is marked, Deny is
// the strong button and no folder-wide answer is offered; a write outside
// shows what it would write; "always" is offered for a week first.
func TestDashboardRiskyApprovals(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "[sandbox]\nstrict = false\n")
	os.MkdirAll(filepath.Join(h.dir, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(h.dir, ".ssh", "id_ed25519"), []byte("PRIVATE KEY"), 0o600)
	os.WriteFile(filepath.Join(h.dir, "notes.txt"), []byte("old notes\n"), 0o644)
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	b.wait(`document.body.dataset.approvalsReady`)

	read := async(alice, "file.read", m("path", filepath.Join(h.dir, ".ssh", "id_ed25519")))
	b.wait(`document.querySelectorAll('.approval.sensitive').length === 1`)
	if s := js[string](b, `document.querySelector('.approval .careful').textContent`); s != "Careful: secrets — SSH keys. Deny unless you are sure." {
		t.Errorf("careful line %q", s)
	}
	if cls := js[string](b, `document.querySelector('.approval button[data-decision="deny_once"]').className`); !strings.Contains(cls, "btn deny") || strings.Contains(cls, "deny-soft") {
		t.Errorf("deny button %q", cls)
	}
	if n := js[int](b, `document.querySelectorAll('.approval input[type=checkbox]').length`); n != 0 {
		t.Errorf("a secret offers %d folder-wide answers", n)
	}
	if v := js[string](b, `document.querySelector('.approval select').value`); v != "7d" {
		t.Errorf("\"always\" is offered for %q first", v)
	}
	b.shot("approval-sensitive-desktop")
	b.click(`.approval button[data-decision="deny_once"]`)
	if err := <-read; err == nil {
		t.Error("the key was read after Deny")
	}

	write := async(alice, "file.write", m("path", filepath.Join(h.dir, "notes.txt"), "content", "line one\nline two\n"))
	b.wait(`document.querySelectorAll('.approval pre.preview').length === 1`)
	if p := js[string](b, `document.querySelector('.approval pre.preview').textContent`); !strings.Contains(p, "Replaces the existing file (10 bytes) with 18 bytes.") || !strings.Contains(p, "line two") {
		t.Errorf("preview %q", p)
	}
	if js[int](b, `document.querySelectorAll('.approval.sensitive').length`) != 0 {
		t.Error("an ordinary file is marked as a secret")
	}
	b.shot("approval-write-desktop")
	b.click(`.approval button[data-decision="deny_once"]`)
	<-write
	b.noPageErrors()
}

// TestBrowserTabsIsolated: the tests share one Chromium, and a test's
// tab must not see what an earlier test's tab left: its cookies and
// storage go with its BrowserContext.
func TestBrowserTabsIsolated(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><title>page</title>")
	}))
	defer page.Close()
	const left = `[document.cookie, localStorage.getItem('left') || '', sessionStorage.getItem('left') || '']`
	t.Run("earlier", func(t *testing.T) {
		b := newBrowser(t)
		b.do(chromedp.Navigate(page.URL))
		js[chromedp.Void](b, `document.cookie = 'left=1; max-age=3600', localStorage.setItem('left', '1'), sessionStorage.setItem('left', '1')`)
		b.do(chromedp.Reload())
		if got := js[[]string](b, left); !slices.Equal(got, []string{"left=1", "1", "1"}) {
			t.Fatalf("the tab kept %q of what it stored: the later test cannot tell", got)
		}
	})
	t.Run("later", func(t *testing.T) {
		b := newBrowser(t)
		b.do(chromedp.Navigate(page.URL))
		if got := js[[]string](b, left); !slices.Equal(got, []string{"", "", ""}) {
			t.Errorf("a new tab found %q that an earlier test's tab stored", got)
		}
	})
}
