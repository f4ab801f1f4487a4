package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// typeInto sets an input's value and fires input, as typing would.
func (b *browser) typeInto(sel, value string) {
	b.t.Helper()
	js[chromedp.Void](b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel, value))
}

// widths takes the page's screenshot at 1280, 1440 and 390 px as
// name-<width>, with the element show scrolled into view.
func (b *browser) widths(name, ready, show string) {
	b.t.Helper()
	for _, w := range []int64{1280, 1440, 390} {
		if w == 390 {
			b.phone()
		} else {
			b.do(chromedp.EmulateViewport(w, 900))
		}
		b.wait(ready)
		// Toasts said what was done before; they would hide the page.
		js[chromedp.Void](b, fmt.Sprintf(`document.querySelector('#toasts')?.replaceChildren(); document.querySelector(%q).scrollIntoView({block: 'end'})`, show))
		js[chromedp.Void](b, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`)
		b.shot(fmt.Sprintf("%s-%d", name, w))
	}
	b.desktop()
}

// TestDashboardRulesAndLevels: on the Rules page the owner writes a
// command rule for one agent and reads, before saving, what it covers in
// the server's sentence; a folder-wide rule on the home folder shows why
// it cannot be saved. On the Agents page one click makes an agent
// Read-only, the level's words show before the click, and the agent's
// next write is refused with a sentence naming the level.
func TestDashboardRulesAndLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium; skipped under -short")
	}
	h := start(t, "")
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)

	b.openTab("rules")
	b.click("#rule-new")
	b.wait(`!document.querySelector('#rule-form').hidden && document.querySelector('#rule-client option[value="alice-agent"]')`)
	b.click(`input[name="rule-kind"][value="files"]`)
	b.choose("#rule-client", "*")
	b.typeInto("#rule-path", h.dir)
	js[chromedp.Void](b, `document.querySelector('#rule-whole').click()`)
	b.wait(`document.querySelector('#rule-covers').classList.contains('error') && document.querySelector('#rule-covers').textContent.includes('home folder')`)

	b.click(`input[name="rule-kind"][value="command"]`)
	b.wait(`!document.querySelector('#rule-command').closest('.field').hidden && document.querySelector('#rule-path').closest('.field').hidden`)
	if js[string](b, `document.querySelector('#rule-client').value`) == "*" {
		t.Error("a command rule kept All agents")
	}
	b.choose("#rule-client", "alice-agent")
	b.typeInto("#rule-command", "git status")
	b.typeInto("#rule-note", "read-only git")
	b.wait(`document.querySelector('#rule-covers').dataset.ok && document.querySelector('#rule-covers').textContent.includes('starts with the words "git status"')`)
	covers := js[string](b, `document.querySelector('#rule-covers').textContent`)
	if !strings.Contains(covers, "alice-agent") || !strings.Contains(covers, "not covered") {
		t.Errorf("sentence %q", covers)
	}
	b.labelled()
	b.widths("rules-add-form", `document.querySelector('#rule-covers').dataset.ok`, "#rule-save")
	b.click("#rule-save")
	b.wait(`[...document.querySelectorAll('#rule-list .rule')].some(el => el.textContent.includes('commands starting with the words git status') && el.textContent.includes('read-only git'))`)
	rules := rpcCall[rulesResult](t, h.dial(ownerToken), "rule.list", nil)
	if len(rules.Rules) != 1 || rules.Rules[0].Target != "git status" || rules.Rules[0].Client != "alice-agent" || rules.Rules[0].Note != "read-only git" {
		t.Fatalf("rules %+v", rules.Rules)
	}
	b.shot("rules-list")

	b.openTab("agents")
	row := `#agent-list li[data-name="alice-agent"]`
	b.wait(`document.querySelector('` + row + ` .level-opt[data-level="read_only"]')`)
	js[chromedp.Void](b, `document.querySelector('`+row+` .level-opt[data-level="trusted"]').focus()`)
	b.wait(`document.querySelector('` + row + ` .level-words').textContent.startsWith('Trusted in its folder: Reads, writes and runs commands')`)
	b.click(row + ` .level-opt[data-level="read_only"]`)
	b.wait(`document.querySelector('` + row + `')?.dataset.level === 'read_only' && document.querySelector('` + row + ` .level-opt[data-level="read_only"]').getAttribute('aria-checked') === 'true'`)
	ce := callErr(t, alice, "file.write", m("path", "x.txt", "content", "x"))
	if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, "Corral refused: this agent is Read-only") {
		t.Errorf("write of a Read-only agent: %+v", ce)
	}
	// The level shows by the agent's name in the activity log too.
	b.openTab("activity")
	b.wait(`[...document.querySelectorAll('#audit-table tbody tr')].some(tr => tr.querySelector('.t-client')?.dataset.levelLabel === 'Read-only' && getComputedStyle(tr.querySelector('.t-client'), '::after').content.includes('Read-only'))`)
	b.openTab("agents")
	b.click("#agent-add")
	b.wait(`document.querySelector('#agent-levels input[value="ask"]')?.checked && document.querySelector('#agent-ask').checked`)
	// A setting changed by hand makes a custom mix; a level sets its own.
	b.choose("#agent-network", "off")
	b.wait(`document.querySelector('#agent-levels input[value="custom"]').checked`)
	b.click(`#agent-levels input[value="trusted"]`)
	b.wait(`!document.querySelector('#agent-ask').checked && document.querySelector('#agent-network').value === 'ask'`)
	b.click(`#agent-levels input[value="ask"]`)
	if got := js[string](b, `document.querySelector('#agent-levels').textContent`); !strings.Contains(got, "Read-only") || !strings.Contains(got, "Asks you before each command") {
		t.Errorf("the form's levels: %q", got)
	}
	b.labelled()
	b.widths("agents-trust-level", `document.querySelector('#agent-levels input[value="ask"]')`, `#agent-list li[data-name="alice-agent"] .level-words`)
	b.noPageErrors()
}
