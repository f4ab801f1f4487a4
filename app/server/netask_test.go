package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/app/wire"
)

// pipCmd touches a file (so the test can tell whether it started), then
// runs pip through the proxy against the test host standing in for
// pypi.org, fetches the index with curl, tries a name below pypi.org
// that does not resolve, and a domain it did not declare.
const pipCmd = `echo x > started.txt; ` +
	`python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --index-url http://pypi.org/simple --trusted-host pypi.org -d dl corral-probe 2>&1 | head -c 2000; ` +
	`curl -sS -m 20 http://pypi.org/simple/probe; echo; ` +
	`curl -sS -m 20 http://files.pythonhosted.org/x; echo; ` +
	`curl -sS -m 20 -o /dev/null -w "lookup %{http_code}\n" http://nowhere.pypi.org/; ` +
	`curl -sS -m 20 http://other.test/; echo`

// TestNetworkAskedBeforeTheCommand (issue 27 item 1): with
// package_managers ["pip"], the owner is asked once, before the command
// starts (it has not run, nothing is listed as running, no event says it
// runs), about every domain of the bundle in one question; after "Allow
// once" every connection goes through with no client timeout (pip prints
// no ProxyError, no retry); a domain it did not declare is refused at
// once with a sentence on the program's output, on stderr and in
// refused. The question is an event of its own, naming the command's
// event; each connection's event says what decided it. A second run of
// the same command is asked again: the first answer widened nothing.
// On the old code the question came from inside pip's first connection,
// about pypi.org alone, with the command already running.
func TestNetworkAskedBeforeTheCommand(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t, "")
	alice := filepath.Join(w.h.base, "alice")
	pipDomains := "*.pypi.org, *.pythonhosted.org, files.pythonhosted.org, pypi.org"

	done := w.run(m("command", pipCmd, "package_managers", []string{"pip"}, "reason", "fetch a package"))
	a := w.own.requested()
	// The question arrives before the command starts.
	if _, err := os.Stat(filepath.Join(alice, "started.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran before the owner answered: started.txt %v", err)
	}
	if run := rpcCall[struct{ Running []wire.Running }](t, w.own.c, "command.list", nil).Running; len(run) != 0 {
		t.Errorf("running while the owner is asked: %+v", run)
	}
	if evs := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "command.run")).Events; len(evs) != 0 {
		t.Errorf("the command's event exists while the owner is asked: %+v", evs)
	}
	if a.Access != "network" || a.OneTimeOnly || strings.Join(a.Domains, ", ") != pipDomains || a.Domain != pipDomains ||
		a.Description != "alice-agent wants to connect to "+pipDomains+" for: "+pipCmd {
		t.Fatalf("question %+v; want one about every pip domain", a)
	}
	rpcCall[any](t, w.own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	r := <-done

	if _, err := os.Stat(filepath.Join(alice, "started.txt")); err != nil {
		t.Errorf("the command did not run: %v (%+v)", err, r)
	}
	for _, bad := range []string{"ProxyError", "Cannot connect to proxy", "Retrying", "timed out", "Operation timed out"} {
		if strings.Contains(r.Stdout+r.Stderr, bad) {
			t.Errorf("a client waited: %q in %+v", bad, r)
		}
	}
	// pip reached the index (the test host is no real index: it finds
	// no such package, which is fine).
	wantOut(t, r, "Looking in indexes: http://pypi.org/simple", "hello from the test host: GET /simple/probe host=pypi.org",
		"hello from the test host: GET /x host=files.pythonhosted.org", "lookup 403",
		"Corral refused other.test:80: other.test is not in this command's allowed_domains or package_managers; ask for it there.")
	if !strings.Contains(r.Stderr, "corral: Corral refused other.test:80: other.test is not in this command's allowed_domains") {
		t.Errorf("stderr lacks the refusal: %q", r.Stderr)
	}
	var refused []string
	if r.Network != nil {
		for _, f := range r.Network.Refused {
			refused = append(refused, f.Target)
		}
	}
	if r.Network == nil || r.Network.Connections < 3 || strings.Join(refused, " ") != "nowhere.pypi.org:80 other.test:80" {
		t.Errorf("network %+v; want pip's and curl's connections, and nowhere.pypi.org and other.test refused", r.Network)
	}

	// The log: the command's event, the question's own event naming it,
	// and each connection labelled by what decided it.
	cmds := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "command.run")).Events
	if len(cmds) != 1 {
		t.Fatalf("command events %+v", cmds)
	}
	cmdEv := cmds[0]
	link := regexp.MustCompile(`for command \S+ \(event ` + fmt.Sprint(cmdEv.ID) + `\)`)
	asks := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "network.ask")).Events
	if len(asks) != 1 || asks[0].Target != pipDomains || asks[0].Decision != "allow" || asks[0].DecidedBy != "owner" ||
		asks[0].Answer != "allow_once" || !link.MatchString(asks[0].Detail) {
		t.Errorf("the question's event %+v; want one naming the command's %+v", asks, cmdEv)
	}
	if !strings.Contains(cmdEv.Detail, "network asked before it started ("+pipDomains+"): owner answered allow_once") {
		t.Errorf("the command's event %q does not say what was asked", cmdEv.Detail)
	}
	conns := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "network.connect")).Events
	byCause := map[string]int{}
	for _, e := range conns {
		cause, _, _ := strings.Cut(e.Detail, ";")
		byCause[cause]++
		if !link.MatchString(e.Detail) {
			t.Errorf("connection event %q does not name the command's event %d", e.Detail, cmdEv.ID)
		}
		switch cause {
		case "the owner's answer":
			if e.Decision != "allow" || e.DecidedBy != "owner" || e.Answer != "allow_once" {
				t.Errorf("allowed connection %+v", e)
			}
		case "the command's list":
			if e.Decision != "deny" || e.Target != "other.test:80" || !strings.Contains(e.Error, "not in this command's allowed_domains") {
				t.Errorf("undeclared connection %+v", e)
			}
		case "name lookup failed":
			if e.Decision != "error" || e.Target != "nowhere.pypi.org:80" || !strings.Contains(e.Error, "could not find the address of nowhere.pypi.org") {
				t.Errorf("failed lookup %+v", e)
			}
		default:
			t.Errorf("connection event %+v: unexpected cause %q", e, cause)
		}
	}
	if byCause["the owner's answer"] < 3 || byCause["the command's list"] != 1 || byCause["name lookup failed"] != 1 {
		t.Errorf("connections by cause %v", byCause)
	}

	// Run 2: the answer of run 1 does not cover it; denied now, every
	// connection is refused at once, saying so.
	done = w.run(m("command", `curl -sS -m 20 http://pypi.org/simple/again; echo`, "package_managers", []string{"pip"}))
	w.answer(t, pipDomains, "deny_once")
	r = <-done
	wantOut(t, r, "Corral refused pypi.org:80: the owner denied it.")
	if r.Network == nil || r.Network.Connections != 0 {
		t.Errorf("a denied domain connected: %+v", r.Network)
	}
}

// TestDashboardNetworkAskedAndLabelled (issue 27 items 1 and 2), in real
// Chromium: the owner answers the one question about a pip command's
// domains on the Approvals page before the command runs; on the Activity
// page each connection's row says what decided it (the owner's answer,
// the command's list, a failed lookup), never "file rules"; the detail
// explains it and "for command N" opens the command's event. On the old
// code those rows read "file rules" and the detail named a request
// number only.
func TestDashboardNetworkAskedAndLabelled(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	w := newNetWorld(t, "")
	b := newBrowser(t)
	b.login(w.h)
	b.hash("#approvals")
	b.wait(`document.body.dataset.approvalsReady`)
	pipDomains := "*.pypi.org, *.pythonhosted.org, files.pythonhosted.org, pypi.org"
	done := w.run(m("command", pipCmd, "package_managers", []string{"pip"}, "reason", "fetch a package"))
	b.wait(`document.querySelectorAll('.approval.network').length === 1 && !!document.querySelector('.approval.network .headline code')`)
	if code := js[string](b, `document.querySelector('.approval.network .headline code').textContent`); code != pipDomains {
		t.Errorf("the question names %q; want every pip domain", code)
	}
	if run := rpcCall[struct{ Running []wire.Running }](t, w.own.c, "command.list", nil).Running; len(run) != 0 {
		t.Errorf("running while the owner is asked: %+v", run)
	}
	b.shot("approval-network-list-1280")
	b.wait(`(() => { const x = document.querySelector('.approval.network button[data-decision="allow_once"]'); if (!x) return false; x.click(); return true; })()`)
	r := <-done
	if strings.Contains(r.Stdout+r.Stderr, "ProxyError") || r.Network == nil || r.Network.Connections < 3 {
		t.Errorf("after Allow once: %+v", r)
	}

	b.openTab("activity")
	// Each connection's row, labelled by what decided it.
	b.wait(`[...document.querySelectorAll('#audit-table tbody tr')].filter(tr => tr.querySelector('.t-op').title === 'network.connect').length >= 5`)
	type netRow struct{ Target, By, Decision string }
	rows := js[[]netRow](b, `[...document.querySelectorAll('#audit-table tbody tr')].filter(tr => tr.querySelector('.t-op').title.startsWith('network.')).map(tr => ({
		Target: tr.querySelector('.t-target').textContent, By: tr.querySelector('.t-by')?.textContent || '', Decision: tr.dataset.decision}))`)
	by := map[string]string{}
	for _, row := range rows {
		if strings.Contains(row.By, "file rules") || strings.Contains(row.By, "own folder") {
			t.Errorf("a network row labelled %q: %+v", row.By, row)
		}
		by[row.Target] = row.By + " · " + row.Decision
	}
	for target, want := range map[string]string{
		"pypi.org:80":               "your answer · allow",
		"files.pythonhosted.org:80": "your answer · allow",
		"other.test:80":             "not in its list · deny",
		"nowhere.pypi.org:80":       "lookup failed · error",
		pipDomains:                  "by you · allow",
	} {
		if by[target] != want {
			t.Errorf("row %s: %q, want %q (rows %+v)", target, by[target], want, rows)
		}
	}
	b.do(chromedp.EmulateViewport(1280, 900))
	js[chromedp.Void](b, `document.getElementById('toasts')?.replaceChildren(); document.querySelector('#audit-table').scrollIntoView({block: 'start'})`)
	b.shot("activity-network-1280")

	// The refused connection's detail says why, and links to the command.
	b.wait(`(() => { const tr = [...document.querySelectorAll('#audit-table tbody tr')].find(tr => tr.querySelector('.t-target').textContent === 'other.test:80'); if (!tr) return false; tr.click(); return true; })()`)
	b.wait(`document.querySelector('#detail').open && document.querySelector('#detail .decided strong')?.textContent.includes('Not in the command’s list')`)
	text := js[string](b, `document.querySelector('#detail .decided').innerText`)
	if strings.Contains(text, "rules for files") || !strings.Contains(text, "refused it at once, without asking") || !strings.Contains(text, "not in this command's allowed_domains") {
		t.Errorf("the detail of the refused connection: %q", text)
	}
	b.shot("activity-network-detail-1280")
	cmdEv := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "command.run")).Events[0]
	href := js[string](b, `document.querySelector('#detail a.command-link')?.getAttribute('href') || ''`)
	if href != fmt.Sprintf("#event=%d", cmdEv.ID) {
		t.Fatalf("the command link is %q; want #event=%d", href, cmdEv.ID)
	}
	b.click(`#detail a.command-link`)
	b.wait(fmt.Sprintf(`document.querySelector('#detail').open && document.querySelector('#detail-title').textContent.startsWith('Ran a command') && [...document.querySelectorAll('#detail dd')].some(dd => dd.textContent === '%d')`, cmdEv.ID))
	b.noPageErrors()
}
