package server

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// layoutWidths are the screens every dashboard page must fit without a
// sideways scroll (issue 27 item 5): laptops, desktops and a phone.
var layoutWidths = []int64{1024, 1280, 1366, 1440, 390}

// viewport sets the browser to width w (a phone below 641 px).
func (b *browser) viewport(w int64) {
	b.t.Helper()
	if w < 641 {
		b.do(chromedp.EmulateViewport(w, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
		return
	}
	b.do(chromedp.EmulateViewport(w, 800))
}

// overflow names what sticks out of the page sideways ("" when nothing
// does): document.scrollingElement.scrollWidth against innerWidth, and
// the widest elements to say why.
func (b *browser) overflow() string {
	b.t.Helper()
	return js[string](b, `(() => {
		const se = document.scrollingElement, w = innerWidth;
		if (se.scrollWidth <= w) return '';
		const wide = [...document.querySelectorAll('body *')].filter(el => {
			const r = el.getBoundingClientRect();
			return r.width && r.right > w + 1;
		}).slice(0, 5).map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + (el.className && el.className.baseVal === undefined ? el.className : '') + ' right=' + Math.round(el.getBoundingClientRect().right));
		return 'scrollWidth ' + se.scrollWidth + ' > ' + w + ': ' + wide.join(', ');
	})()`)
}

// Every page of the dashboard fits every width with no sideways scroll;
// on a phone the tab labels are whole, Activity shows events on the first
// screen, and a question's answers fit two rows.
func TestDashboardLayoutFits(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h, outside := startWithOutsideText(t)
	seed(t, h)
	b := newBrowser(t)
	b.login(h)
	// A question waiting, so the Approvals page shows a card.
	alice := h.dial(aliceKey)
	done := async(alice, "file.read", m("path", outside, "reason", "summarise my taxes for the year, with every receipt"))
	b.hash("#approvals")
	b.wait(`document.querySelectorAll('.approval').length === 1`)

	// Agents at different trust levels, so the pages show their tags.
	owner := h.dial(ownerToken)
	rpcCall[any](t, owner, "agent.set_level", m("name", "alice-agent", "level", "trusted"))
	rpcCall[any](t, owner, "agent.set_level", m("name", "bob-agent", "level", "read_only"))
	b.wait(`document.querySelector('#day-summaries') !== null`)
	js[chromedp.Void](b, `document.querySelector('#day-summaries').open = true`)

	tabs := js[[]string](b, `[...document.querySelectorAll('a.tab')].map(a => a.dataset.tab)`)
	if len(tabs) < 7 {
		t.Fatalf("tabs %v", tabs)
	}
	for _, w := range layoutWidths {
		b.viewport(w)
		for _, tab := range tabs {
			b.openTab(tab)
			if tab == "rules" { // with the add form open: it must fit too
				js[chromedp.Void](b, `document.querySelector('#rule-form').hidden && document.querySelector('#rule-new').click()`)
				b.wait(`!document.querySelector('#rule-form').hidden`)
			}
			b.wait(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
			if o := b.overflow(); o != "" {
				t.Errorf("%s at %d px scrolls sideways: %s", tab, w, o)
			}
			if w != 1024 {
				b.shot(fmt.Sprintf("%s-%d", tab, w)) // also to $CORRAL_SHOTS, for the report
			}
		}
		// The header's buttons are on screen, whole, and its tabs too but
		// on a phone, whose tab bar scrolls sideways inside itself.
		sel := ".topbar button, .topbar .tab"
		if w < 641 {
			sel = ".topbar button"
		}
		if out := js[[]string](b, `[...document.querySelectorAll(`+jsString(sel)+`)].filter(el => {
			const r = el.getBoundingClientRect();
			return r.width && (r.left < 0 || r.right > innerWidth || r.bottom > innerHeight);
		}).map(el => el.textContent.trim())`); len(out) > 0 {
			t.Errorf("at %d px the header cuts %q", w, out)
		}
		// Tab labels are whole (not cut with an ellipsis) where shown.
		if cut := js[[]string](b, `[...document.querySelectorAll('.tab .tab-label')].filter(l => {
			const r = l.getBoundingClientRect();
			return r.width > 1 && l.scrollWidth > l.clientWidth + 1;
		}).map(l => l.textContent)`); len(cut) > 0 {
			t.Errorf("at %d px tab labels are cut: %q", w, cut)
		}
		// A question's answers fit two rows, each label on two lines at most.
		b.openTab("approvals")
		if tall := js[[]string](b, `[...document.querySelectorAll('.approval .decisions .btn')].filter(x => {
			const r = document.createRange();
			r.selectNodeContents(x);
			return new Set([...r.getClientRects()].map(q => Math.round(q.top))).size > 2;
		}).map(x => x.textContent)`); len(tall) > 0 {
			t.Errorf("at %d px answers wrap onto three lines or more: %q", w, tall)
		}
		if rows := js[int](b, `new Set([...document.querySelectorAll('.approval .decisions .btn')].map(x => Math.round(x.getBoundingClientRect().top))).size`); rows > 2 {
			t.Errorf("at %d px the answers take %d rows", w, rows)
		}
		// Scrolled into view, an element lands below the sticky header
		// (two rows between 1181 and 1599 px), not under it: the scroll
		// padding follows the header's height. A spacer makes the page
		// tall enough to scroll the card to the top.
		if under := js[string](b, `new Promise(res => {
			const spacer = document.body.appendChild(Object.assign(document.createElement('div'), { style: 'height: 4000px' }));
			const el = document.querySelector('.approval');
			el.scrollIntoView({ block: 'start' });
			requestAnimationFrame(() => {
				const bar = document.querySelector('.topbar').getBoundingClientRect();
				const top = el.getBoundingClientRect().top;
				spacer.remove();
				scrollTo(0, 0);
				res(top < bar.bottom - 1 ? 'card top ' + Math.round(top) + ' px, header bottom ' + Math.round(bar.bottom) + ' px, scroll-padding-top ' + (document.documentElement.style.scrollPaddingTop || 'none') : '');
			});
		})`); under != "" {
			t.Errorf("at %d px an element scrolled into view is under the sticky header: %s", w, under)
		}
	}

	// Activity on a phone: events on the first screen (the day summary
	// folded, as it opens).
	b.viewport(390)
	b.openTab("activity")
	js[chromedp.Void](b, `document.querySelector('#day-summaries').open = false`)
	top := js[float64](b, `(() => { const r = document.querySelector('#audit-table tbody tr'); return r ? r.getBoundingClientRect().top : 1e9; })()`)
	if vh := js[float64](b, `innerHeight`); top > vh-120 {
		t.Errorf("on a phone the first event starts at %.0f px of %.0f: filters and chart fill the first screen", top, vh)
	}
	b.noPageErrors()
	own := h.owner(t)
	for _, p := range rpcCall[struct{ Pending []struct{ ID string } }](t, own.c, "approval.list", nil).Pending {
		rpcCall[any](t, own.c, "approval.respond", m("id", p.ID, "decision", "deny_once"))
	}
	<-done
}
