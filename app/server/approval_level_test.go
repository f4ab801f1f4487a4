package server

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
)

// Every approval carries the asking agent's trust level (issue 26.3): a
// paired phone, which cannot call agent.list, shows it on the question's
// card as the dashboard does, and approval.list gives level and its words.
func TestApprovalCarriesTheLevel(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	owner := h.dial(ownerToken)
	rpcCall[any](t, owner, "agent.set_level", m("name", "alice-agent", "level", "trusted"))
	var b *browser
	if !testing.Short() { // the phone is paired first: Chromium may take long to start
		b = newBrowser(t)
		b.phone()
		code, _ := h.srv.pair.NewCode(h.clock.Now())
		b.do(chromedp.Navigate(h.url + "/pair?code=" + code))
		pairInPage(t, b, "Kitchen phone")
	}
	own := h.owner(t)
	done := async(h.dial(aliceKey), "file.read", m("path", outside))
	a := own.requested()
	if a.Level != "trusted" {
		t.Errorf("approval.requested level %q, want trusted", a.Level)
	}
	var list struct {
		Pending []struct {
			Level      string `json:"level"`
			LevelLabel string `json:"level_label"`
		}
	}
	raw := rpcCall[json.RawMessage](t, owner, "approval.list", nil)
	json.Unmarshal(raw, &list)
	if len(list.Pending) != 1 || list.Pending[0].Level != "trusted" || list.Pending[0].LevelLabel != "Trusted in its folder" {
		t.Errorf("approval.list: %s", raw)
	}

	if b != nil {
		b.wait(`[...document.querySelectorAll('.approval .level-tag')].some(el => el.textContent === 'Trusted in its folder' && el.dataset.level === 'trusted')`)
		b.noPageErrors()
	}
	rpcCall[any](t, owner, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	<-done
}
