package server

import (
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestWebAppNotifiesNewApproval: the dashboard registers its service
// worker for the whole site, is installable (manifest with an icon), and
// once the owner allows notifications a new approval shows a system
// notification through the worker's registration, which goes away when
// the approval is answered.
func TestWebAppNotifiesNewApproval(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h, outside := startWithOutsideText(t)
	alice := h.dial(aliceKey)
	b := newOwnBrowser(t) // off the record, the worker's notifications were flaky
	b.phone()
	b.login(h)
	b.wait(`document.body.dataset.swReady === '1' || document.body.dataset.swError`)
	if e := js[string](b, `document.body.dataset.swError || ''`); e != "" {
		t.Fatalf("service worker: %s", e)
	}
	if scope := js[string](b, `navigator.serviceWorker.getRegistration().then(r => r ? r.scope : '')`); scope != h.url+"/" {
		t.Errorf("service worker scope %q; want %q", scope, h.url+"/")
	}
	// Before permission: the page offers to ask for it.
	b.hash("#approvals")
	b.wait(`!document.querySelector('#notify-on').hidden`)
	b.shot("phone-notify-offer")
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: h.url, BrowserContextID: b.id,
	}); err != nil {
		t.Fatalf("grant notifications: %v", err)
	}
	b.click(`#notify-on`)
	b.wait(`Notification.permission === 'granted' && document.querySelector('#notify-on').hidden`)
	b.hash("#activity") // looking at the approvals themselves, the page would not notify

	manifest := js[string](b, `fetch(document.querySelector('link[rel=manifest]').href).then(r => r.ok ? r.text() : 'HTTP ' + r.status)`)
	if !strings.Contains(manifest, `"display": "standalone"`) || !strings.Contains(manifest, `/app-icon.png`) {
		t.Errorf("manifest: %s", manifest)
	}
	if st := js[int](b, `fetch('/app-icon.png').then(r => r.status)`); st != 200 {
		t.Errorf("app icon: %d", st)
	}

	done := async(alice, "file.read", m("path", outside, "reason", "summarise my taxes"))
	b.wait(`navigator.serviceWorker.getRegistration().then(r => r.getNotifications()).then(ns => ns.length === 1)`)
	got := js[[]string](b, `navigator.serviceWorker.getRegistration().then(r => r.getNotifications()).then(ns => [ns[0].title, ns[0].body, ns[0].tag])`)
	if got[0] != "Corral: an agent is asking" || !strings.Contains(got[1], "waiting for your answer") || !strings.HasPrefix(got[2], "approval-") {
		t.Errorf("notification %q", got)
	}
	// Answered (here in the page): the notification goes.
	b.hash("#approvals")
	b.wait(`document.querySelectorAll('.approval').length === 1`)
	b.click(`.approval button[data-decision="allow_once"]`)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's call was not answered")
	}
	b.wait(`navigator.serviceWorker.getRegistration().then(r => r.getNotifications()).then(ns => ns.length === 0)`)
	b.noPageErrors()
}
