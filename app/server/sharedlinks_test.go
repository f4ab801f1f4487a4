package server

import (
	"strings"
	"testing"
)

// The share dialog says a link works only on this computer while neither
// public_url nor the LAN is set, and offers the LAN address once it is.
func TestShareDialogReach(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	rpcCall[any](t, h.dial(aliceKey), "file.write", m("path", "output/plan.txt", "content", "the plan"))
	b := newBrowser(t)
	b.login(h)
	share := func() {
		b.hash("#files?place=alice&path=output")
		b.wait(`[...document.querySelectorAll('#listing .entry.file')].some(li => li.dataset.path === 'output/plan.txt')`)
		b.click(`#listing .entry.file .acts button[aria-label^="Make a link"]`)
		b.wait(`document.querySelector('#share').open`)
		b.click(`#share .detail-actions .btn.primary`)
		b.wait(`document.querySelector('#share-url')`)
	}
	share()
	if got := js[string](b, `document.querySelector('#share .share-local')?.innerText || ''`); !strings.Contains(got, "works only on this computer") {
		t.Errorf("local-only note %q", got)
	}
	if js[bool](b, `!!document.querySelector('#share-lan-url')`) {
		t.Error("a LAN address offered with the LAN off")
	}
	b.shot("share-local-only-desktop")
	b.click(`#share-close`)

	lan, err := h.srv.ListenLAN() // binds only; no traffic goes to the LAN address
	if err != nil {
		t.Skipf("no LAN address on this machine: %v", err)
	}
	defer lan.Close()
	h.srv.mu.Lock()
	lanURL := h.srv.lanURL
	h.srv.mu.Unlock()
	share()
	b.wait(`document.querySelector('#share-lan-url')`)
	got := js[string](b, `document.querySelector('#share-lan-url').value`)
	local := js[string](b, `document.querySelector('#share-url').value`)
	if !strings.HasPrefix(got, lanURL+"/files/out?path=output%2Fplan.txt&token=") && !strings.HasPrefix(got, lanURL+"/files/out?path=output/plan.txt&token=") {
		t.Errorf("LAN link %q, want one on %s", got, lanURL)
	}
	// With the LAN on, the link itself carries the LAN address (issue 26):
	// what the dialog shows for the home network is the same link.
	if local != got {
		t.Errorf("the link %q is not the LAN link %q", local, got)
	}
	b.wait(`document.querySelector('#share .link-qr img[src^="/qr.svg?text="]')?.naturalWidth > 100`) // drawn by the server
	if js[bool](b, `!!document.querySelector('#share .share-local')`) {
		t.Error("local-only note with the LAN on")
	}
	b.shot("share-lan-desktop")
	b.noPageErrors()
}

// Agents are not told the LAN address or where a link reaches.
func TestLinkReachOwnerOnly(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "output/a.txt", "content", "a"))
	res := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/a.txt"))
	if _, has := res["local_only"]; has {
		t.Errorf("agent told local_only: %v", res)
	}
	if _, has := res["lan_url"]; has {
		t.Errorf("agent told lan_url: %v", res)
	}
}
