package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestDashboardSharedLinks: the owner finds the links an agent handed out
// under Links, sees a new one arrive live, withdraws one with two clicks,
// and only that one stops opening.
func TestDashboardSharedLinks(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	hostile := "output/<b>bold</b>.txt"
	for _, p := range []string{"output/plan.txt", "output/keep.txt", hostile} {
		rpcCall[any](t, alice, "file.write", m("path", p, "content", "x"))
	}
	plan := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/plan.txt"))["url"].(string)
	keep := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/keep.txt", "expires_in", "2h"))["url"].(string)

	b := newBrowser(t)
	b.login(h)
	b.openTab("shared")
	b.wait(`document.querySelectorAll('#shared-list li.shared-link').length === 2`)
	rows := js[[]string](b, `[...document.querySelectorAll('#shared-list li.shared-link')].map(li => li.innerText)`)
	if !strings.Contains(rows[0], "output/keep.txt") || !strings.Contains(rows[0], "made by alice-agent") || !strings.Contains(rows[0], "expires in 2 hours") {
		t.Errorf("first row %q", rows[0])
	}
	// A link made while the page is open shows up without a reload; its
	// name is text, not markup.
	rpcCall[any](t, alice, "link.create", m("path", hostile))
	b.wait(`document.querySelectorAll('#shared-list li.shared-link').length === 3`)
	if js[bool](b, `!!document.querySelector('#shared-list b')`) {
		t.Error("an agent's file name became markup")
	}
	if name := js[string](b, `document.querySelector('#shared-list li.shared-link .name').textContent`); !strings.Contains(name, "<b>bold</b>") {
		t.Errorf("hostile name shown as %q", name)
	}
	b.labelled()
	b.shot("links-shared-desktop")
	// A link's QR code, drawn by Corral, for a phone's camera.
	b.click(`#shared-list li.shared-link button[aria-label^="QR code of the link to output/keep.txt"]`)
	b.wait(`document.querySelector('#shared-list li.shared-link .link-qr img')?.naturalWidth > 100`)
	b.shot("links-qr")

	// plan.txt, the oldest, is the last row.
	id := js[string](b, `[...document.querySelectorAll('#shared-list li.shared-link')].find(li => li.querySelector('.name').textContent === 'output/plan.txt')?.dataset.id || ''`)
	if id == "" {
		t.Fatal("no row for output/plan.txt")
	}
	row := fmt.Sprintf(`#shared-list li.shared-link[data-id=%q]`, id)
	b.click(row + ` button.danger`)
	if resp, _ := get(t, plan); resp.StatusCode != http.StatusOK {
		t.Errorf("one click withdrew the link: %d", resp.StatusCode)
	}
	b.click(row + ` button.danger`)
	// Marked withdrawn in place, also once the live reload has come in.
	b.wait(`document.querySelector('` + row + `')?.dataset.state === 'revoked' && document.querySelectorAll('#shared-list li.shared-link').length === 3`)
	if resp, body := get(t, plan, "Accept", "text/html"); resp.StatusCode != http.StatusGone || !strings.Contains(body, "withdrawn") {
		t.Errorf("withdrawn link: %d %q", resp.StatusCode, body)
	}
	if resp, body := get(t, keep); resp.StatusCode != http.StatusOK || body != "x" {
		t.Errorf("the other link: %d %q", resp.StatusCode, body)
	}
	b.shot("links-shared-revoked")

	// Reopened, the list shows what still opens; the toggle shows the rest.
	b.hash("#activity")
	b.openTab("shared")
	b.wait(`document.querySelectorAll('#shared-list li.shared-link').length === 2`)
	b.click(`#shared-all`)
	b.wait(`[...document.querySelectorAll('#shared-list li.shared-link')].some(li => li.dataset.state === 'revoked' && li.innerText.includes('withdrawn'))`)
	b.noPageErrors()

}

// TestDashboardSharedLinksPhone: the list at 390 px, opened on a phone-sized
// window, with a link the owner withdrew elsewhere.
func TestDashboardSharedLinksPhone(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h := start(t, "")
	alice, owner := h.dial(aliceKey), h.dial(ownerToken)
	for _, p := range []string{"output/plan.txt", "output/summary of the week.md"} {
		rpcCall[any](t, alice, "file.write", m("path", p, "content", "x"))
		rpcCall[any](t, alice, "link.create", m("path", p))
	}
	rpcCall[any](t, owner, "link.create", m("path", "output", "context", m("user_id", "alice")))
	list := rpcCall[linksPage](t, owner, "links.list", nil)
	rpcCall[any](t, owner, "link.revoke", m("id", list.Links[len(list.Links)-1].ID))

	b := newBrowser(t)
	b.phone()
	b.login(h)
	b.openTab("shared")
	b.wait(`document.querySelectorAll('#shared-list li.shared-link').length === 2`)
	if got := js[string](b, `document.querySelector('#shared-list li.shared-link .name').textContent`); got != "All of alice’s folder" && got != "output/" {
		t.Errorf("folder link named %q", got)
	}
	b.click(`#shared-all`)
	b.wait(`document.querySelectorAll('#shared-list li.shared-link').length === 3 && document.querySelector('#shared-list li.shared-link.revoked')`)
	// Nothing sticks out at 390 px, eight tabs in the bar included.
	if w := js[int](b, `Math.max(document.documentElement.scrollWidth, document.body.scrollWidth, ...[...document.querySelectorAll('.tabs, #view-shared, #shared-list li')].map(el => Math.ceil(el.getBoundingClientRect().right)))`); w > 390 {
		t.Errorf("page is %dpx wide at 390px", w)
	}
	b.shot("links-shared-phone")
	b.noPageErrors()
}
