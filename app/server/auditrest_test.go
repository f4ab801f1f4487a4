package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"corral/app/wire"
	"corral/core/audit"
	"corral/store"
)

// The dashboard keeps no copy of the audit log's words: the owner's
// session.info carries every operation with its label and groups, and the
// decisions, as core/audit defines them; an agent's does not.
func TestSessionInfoCarriesTheAuditVocabulary(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	info := rpcCall[sessionInfo](t, h.dial(ownerToken), "session.info", nil)
	if len(info.Operations) != len(audit.Operations) {
		t.Fatalf("%d operations, want %d", len(info.Operations), len(audit.Operations))
	}
	for i, o := range audit.Operations {
		got := info.Operations[i]
		if got.Op != o.Name || got.Label != o.Label || !slices.Equal(got.Groups, o.Groups) {
			t.Errorf("operation %d: %+v, want %+v", i, got, o)
		}
	}
	if len(info.Decisions) != 3 || info.Decisions[1].Decision != "deny" || info.Decisions[1].Label != "Denied" {
		t.Errorf("decisions: %+v", info.Decisions)
	}
	agent := rpcCall[sessionInfo](t, h.dial(aliceKey), "session.info", nil)
	if agent.Operations != nil || agent.Decisions != nil {
		t.Errorf("an agent got the vocabulary: %+v", agent)
	}
}

// The dashboard's menus and rows use the server's words: an operation the
// dashboard never had a label for before the table moved to the server
// (config.reload) is offered by its label, and a row shows it.
func TestDashboardUsesTheServersWords(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h := start(t, "")
	if err := h.srv.record(t.Context(), "owner", "config.reload", "/x/config.toml", "reloaded"); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.loginAt(h, "#activity?own=1&decision=allow")
	b.wait(`[...document.querySelectorAll('#f-op option')].some((o) => o.value === 'config.reload' && o.textContent.startsWith('Reloaded the settings'))`)
	b.wait(`[...document.querySelectorAll('#audit-table tbody td.t-op')].some((td) => td.textContent === 'Reloaded the settings')`)
	b.wait(`document.querySelector('#f-decision').value === 'allow' && document.querySelector('#f-decision').selectedOptions[0].textContent === 'Allowed'`)
	b.noPageErrors()
}

// The table is in time order, not commit order: an event whose approval
// waited is recorded after events that happened meanwhile, yet shows where
// its time puts it, in the first load and when it arrives on the live tail.
func TestDashboardRowsInTimeOrder(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h := start(t, "")
	now := time.Now().UTC().Truncate(time.Second)
	rec := func(ago time.Duration, target string) {
		t.Helper()
		_, err := h.store.Record(context.Background(), audit.Event{Time: now.Add(-ago), Client: "Claude", User: "alice",
			Op: "file.write", Target: target, Decision: audit.Allow, DecidedBy: audit.ByOwner})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec(3*time.Minute, "a")
	rec(time.Minute, "b")
	rec(5*time.Minute, "c-waited") // asked 5 minutes ago, answered just now
	rec(time.Minute, "d-same-time-as-b")
	b := newBrowser(t)
	b.loginAt(h, "#activity?live=1")
	targets := func() string {
		return strings.Join(js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr .t-target')].map((td) => td.textContent)`), " ")
	}
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 4`)
	if got := targets(); got != "d-same-time-as-b b a c-waited" {
		t.Fatalf("rows %q", got)
	}
	rec(2*time.Minute, "e-waited")
	rec(0, "f-now")
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 6`)
	if got := targets(); got != "f-now d-same-time-as-b b e-waited a c-waited" {
		t.Errorf("rows after the live tail %q", got)
	}
	if n := js[int](b, `document.querySelectorAll('#audit-table tbody tr.fresh').length`); n != 2 {
		t.Errorf("%d rows marked new, want 2", n)
	}
	b.noPageErrors()
}

// deviceWS is a paired phone's /ws connection, made as pairing would leave
// it: a device in the store, its cookie and its second secret.
func deviceWS(t *testing.T, h *harness, name string) func(method string, params any) map[string]any {
	t.Helper()
	token := "device-token-" + strings.Repeat("x", 32)
	if err := h.store.AddDevice(t.Context(), store.Device{ID: "dv_test", Name: name, Paired: time.Now()}, token); err != nil {
		t.Fatal(err)
	}
	cookie := &http.Cookie{Name: deviceCookie, Value: token}
	d := &websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + h.srv.secretFor("device", token)}}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(h.url, "http")+"/ws", http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}})
	if err != nil {
		t.Fatalf("device /ws: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return wsCaller(t, conn)
}

// wsCaller makes calls on a raw /ws connection, one at a time, and
// returns each call's answer (notifications in between are skipped).
func wsCaller(t *testing.T, conn *websocket.Conn) func(method string, params any) map[string]any {
	id := 0
	return func(method string, params any) map[string]any {
		t.Helper()
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		conn.WriteMessage(websocket.TextMessage, b)
		for {
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, msg, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			var v map[string]any
			json.Unmarshal(msg, &v)
			if v["id"] == float64(id) {
				return v
			}
		}
	}
}

// Which of the owner's surfaces answered a question is recorded in the
// event and said in its detail: a paired phone by its name, the command
// line (the owner's key), a dashboard tab by its browser.
func TestDashboardSaysWhoAnswered(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(outside, 0o755)
	for _, n := range []string{"phone.txt", "cli.txt", "tab.txt"} {
		os.WriteFile(filepath.Join(outside, n), []byte(n), 0o644)
	}
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	phone := deviceWS(t, h, "Pixel \u202e8")

	ask := func(name string) (chan error, string) {
		done := async(alice, "file.read", m("path", filepath.Join(outside, name)))
		return done, own.requested().ID
	}
	done, id := ask("phone.txt")
	if v := phone("approval.respond", m("id", id, "decision", "allow_once")); v["error"] != nil {
		t.Fatalf("the phone's answer: %v", v)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done, id = ask("cli.txt")
	rpcCall[any](t, own.c, "approval.respond", m("id", id, "decision", "deny_once"))
	<-done

	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	done, _ = ask("tab.txt")
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	b.click(`.approval button[data-decision="allow_once"]`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	page := rpcCall[wire.Page](t, own.c, "audit.query", m("client", "alice-agent", "op", "file.read"))
	byTarget := map[string]wire.Event{}
	for _, e := range page.Events {
		byTarget[filepath.Base(e.Target)] = e
	}
	want := []struct{ file, answer, by, sentence string }{
		{"phone.txt", "allow_once", "device:Pixel \u202e8", `Allowed once by you on Pixel \u202e8 (phone).`},
		{"cli.txt", "deny_once", "cli", "Denied by you from the command line (corral approve)."},
		{"tab.txt", "allow_once", "dashboard:Chrome", "Allowed once by you in the dashboard (Chrome on this computer)."},
	}
	for _, w := range want {
		e := byTarget[w.file]
		if e.Answer != w.answer || e.AnsweredBy != w.by || e.DecidedBy != audit.ByOwner {
			t.Errorf("%s: answer %q by %q (decided by %s), want %q by %q", w.file, e.Answer, e.AnsweredBy, e.DecidedBy, w.answer, w.by)
			continue
		}
		b.hash(fmt.Sprintf("#event=%d", e.ID))
		b.detailText(e.ID)
		got := js[string](b, `document.querySelector('#detail-answered')?.textContent || ''`)
		if got != w.sentence {
			t.Errorf("%s: detail says %q, want %q", w.file, got, w.sentence)
		}
		if w.file == "phone.txt" {
			b.shot("auditrest-answered-on-phone")
		}
		if w.file == "tab.txt" {
			b.shot("auditrest-answered-in-dashboard")
		}
		js[any](b, `document.querySelector('#detail').close()`)
		b.wait(`!document.querySelector('#detail').open`)
	}
	b.noPageErrors()
}

// An event decided by a rule links to it: the Rules page shows that rule
// highlighted and scrolled into view; once the rule is revoked, the page
// says it is gone.
func TestDashboardEventLinksToItsRule(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(outside, 0o755)
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	file := func(i int) string { return filepath.Join(outside, fmt.Sprintf("f%d.txt", i)) }
	for i := range 10 {
		os.WriteFile(file(i), []byte("x"), 0o644)
		done := async(alice, "file.read", m("path", file(i)))
		rpcCall[any](t, own.c, "approval.respond", m("id", own.requested().ID, "decision", "allow_always"))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	rpcCall[any](t, alice, "file.read", m("path", file(0))) // decided by the oldest rule
	var rules struct{ Rules []struct{ ID, Target string } }
	rules = rpcCall[struct{ Rules []struct{ ID, Target string } }](t, own.c, "rule.list", nil)
	var ruleID string
	for _, r := range rules.Rules {
		if r.Target == file(0) {
			ruleID = r.ID
		}
	}
	page := rpcCall[wire.Page](t, own.c, "audit.query", m("client", "alice-agent", "limit", 1))
	ev := page.Events[0]
	if ruleID == "" || ev.DecidedBy != audit.ByRule || ev.Rule != ruleID {
		t.Fatalf("event %+v, rule %q", ev, ruleID)
	}

	b := newBrowser(t)
	b.login(h)
	follow := func() {
		t.Helper()
		b.hash(fmt.Sprintf("#event=%d", ev.ID))
		b.detailText(ev.ID)
		if got := js[string](b, `document.querySelector('#detail-rule')?.textContent || ''`); got != "Show the rule on the Rules page" {
			t.Fatalf("the detail's rule link: %q", got)
		}
		b.click("#detail-rule")
		b.wait(`location.hash.startsWith('#rules') && !document.querySelector('#view-rules').hidden && !document.querySelector('#detail').open`)
	}
	follow()
	b.wait(fmt.Sprintf(`(() => {
		const el = document.querySelector('.rule.pointed');
		if (!el || el.dataset.id !== %s) return false;
		const r = el.getBoundingClientRect();
		return r.top >= 0 && r.bottom <= innerHeight && document.activeElement === el;
	})()`, jsString(ruleID)))
	if n := js[int](b, `document.querySelectorAll('.rule.pointed').length`); n != 1 {
		t.Errorf("%d rules highlighted", n)
	}
	if !js[bool](b, `document.querySelector('#rules-gone').hidden`) {
		t.Error("the page says the rule is gone while it is there")
	}
	if y := js[float64](b, `scrollY`); y == 0 {
		t.Error("the page did not scroll to the oldest of ten rules")
	}
	b.shot("auditrest-rule-highlighted")

	rpcCall[any](t, own.c, "rule.revoke", m("id", ruleID))
	follow()
	b.wait(`(() => {
		const gone = document.querySelector('#rules-gone');
		if (gone.hidden || !gone.textContent.includes('has since been removed') || document.querySelector('.rule.pointed')) return false;
		const r = gone.getBoundingClientRect();
		return r.top >= 0 && r.bottom <= innerHeight;
	})()`)
	b.shot("auditrest-rule-removed")
	b.noPageErrors()
}

// The Action filter takes several actions at once, kept in the URL; "all
// reading and looking" is a shortcut that ticks its actions.
func TestDashboardSeveralActions(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h := start(t, "")
	seed(t, h)
	own := h.dial(ownerToken)
	count := func(ops ...string) int {
		p := rpcCall[wire.Page](t, own, "audit.query", m("ops", ops, "hide_own", true))
		return len(p.Events)
	}
	b := newBrowser(t)
	b.login(h)
	b.choose("#f-op", "several")
	b.wait(`!document.querySelector('#f-ops-box').hidden`)
	b.click(`#f-ops-list input[value="file.write"]`)
	b.click(`#f-ops-list input[value="folder.list"]`)
	want := count("file.write", "folder.list")
	b.wait(fmt.Sprintf(`document.body.dataset.auditReady && location.hash.includes('ops=file.write%%2Cfolder.list') && document.querySelectorAll('#audit-table tbody tr').length === %d`, want))
	if ops := js[[]string](b, `[...new Set([...document.querySelectorAll('#audit-table tbody td.t-op')].map((td) => td.title))].sort()`); !slices.Equal(ops, []string{"file.write", "folder.list"}) {
		t.Errorf("rows show %v", ops)
	}
	b.shot("auditrest-several-actions")

	// A reload keeps them.
	b.do(chromedp.Reload())
	b.wait(fmt.Sprintf(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === %d && document.querySelector('#f-ops-list input[value="folder.list"]')?.checked && !document.querySelector('#f-ops-box').hidden`, want))

	// The shortcut ticks every reading and looking action.
	b.click("#f-ops-looks")
	looks := append([]string{"file.write"}, audit.OpsIn(audit.GroupLooks)...)
	b.wait(fmt.Sprintf(`document.body.dataset.auditReady && document.querySelectorAll('#audit-table tbody tr').length === %d && document.querySelector('#f-ops-list input[value="file.grep"]').checked`, count(looks...)))
	b.noPageErrors()
}
