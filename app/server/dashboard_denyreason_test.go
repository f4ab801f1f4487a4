package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/app/client"
)

// TestDashboardDenyWithReason: an approval card offers a field for the
// owner's reason next to Deny, at 1280 px and on a phone (390 px, the page
// a paired phone opens); the sentence typed there reaches the agent's
// error and the event's detail in the Activity, as text (markup in it is
// not rendered), and Enter in the field denies once.
func TestDashboardDenyWithReason(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	dir, outside := denyReasonSetup(t)
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	b.wait(`document.body.dataset.approvalsReady`)

	agentErr := func(done chan error) *client.Error {
		t.Helper()
		select {
		case err := <-done:
			ce, _ := err.(*client.Error)
			if ce == nil {
				t.Fatalf("the agent's call: %v, want a denial", err)
			}
			return ce
		case <-time.After(20 * time.Second):
			t.Fatal("the agent's call is still blocked after Deny")
		}
		return nil
	}

	// At 1280 px: typed, then Deny clicked.
	done := async(alice, "file.read", m("path", outside, "reason", "summarise my taxes"))
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	if got := js[string](b, `document.querySelector('.approval .deny-reason-field').innerText`); !strings.Contains(got, "tell the agent why") {
		t.Errorf("reason field label %q", got)
	}
	// The field sits between the allow row and the deny row.
	if order := js[string](b, `[...document.querySelector('.approval .decisions').children].map(c => c.className).join('|')`); order != "row allows|deny-reason-field|row denies" {
		t.Errorf("answer group order %q", order)
	}
	b.do(chromedp.SendKeys(chromedp.CSS(`.approval .deny-reason`), "use the share folder instead"))
	b.labelled()
	b.shot("deny-reason-dashboard-1280")
	b.click(`.approval button[data-decision="deny_once"]`)
	ce := agentErr(done)
	if want := "The owner denied access to " + outside + ": use the share folder instead."; ce.Data.Kind != "denied" || ce.Message != want {
		t.Errorf("agent's error %q (%s), want %q", ce.Message, ce.Data.Kind, want)
	}
	b.wait(`[...document.querySelectorAll('#toasts .toast')].some(t => t.textContent.includes('with your reason'))`)
	ev := newestEvent(t, h, "file.read", outside)
	b.hash(fmt.Sprintf("#event=%d", ev.ID))
	if d := b.detailText(ev.ID); !strings.Contains(d, "owner's reason: use the share folder instead") {
		t.Errorf("the event's detail lacks the reason:\n%s", d)
	}
	b.do(chromedp.KeyEvent("\x1b"))
	b.wait(`!document.querySelector('#detail').open`)

	// On a phone: markup typed as the reason stays text; Enter denies.
	b.phone()
	b.hash("#approvals")
	done = async(alice, "file.read", m("path", outside))
	b.wait(`document.querySelectorAll('.approval').length === 1 && !document.querySelector('#view-approvals').hidden`)
	b.do(chromedp.SendKeys(chromedp.CSS(`.approval .deny-reason`), "<b>not here</b>, ask me tonight"))
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("approvals page is %dpx wide at 390px with the reason field", w)
	}
	if px := js[float64](b, `document.querySelector('.approval .deny-reason').getBoundingClientRect().height`); px < 40 {
		t.Errorf("reason field only %vpx high on a phone", px)
	}
	js[chromedp.Void](b, `document.querySelectorAll('#toasts .toast').forEach(t => t.remove()); document.querySelector('.approval .deny-reason').scrollIntoView({block: 'center'})`)
	b.shot("deny-reason-phone-390")
	b.do(chromedp.KeyEvent("\r"))
	ce = agentErr(done)
	if want := "The owner denied access to " + outside + ": <b>not here</b>, ask me tonight."; ce.Message != want {
		t.Errorf("agent's error after Enter %q, want %q", ce.Message, want)
	}
	ev = newestEvent(t, h, "file.read", outside)
	if ev.Answer != "deny_once" {
		t.Errorf("Enter in the reason field answered %q, want deny_once", ev.Answer)
	}
	b.hash(fmt.Sprintf("#event=%d", ev.ID))
	if d := b.detailText(ev.ID); !strings.Contains(d, "owner's reason: <b>not here</b>, ask me tonight") {
		t.Errorf("the event's detail on a phone lacks the reason as text:\n%s", d)
	}
	if n := js[int](b, `document.querySelectorAll('#detail b').length`); n != 0 {
		t.Errorf("the reason's markup was rendered: %d <b> in the detail", n)
	}
	b.shot("deny-reason-detail-phone-390")
	b.noPageErrors()
}
