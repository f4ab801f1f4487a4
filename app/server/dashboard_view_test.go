package server

import (
	"strings"
	"testing"
)

// The dashboard's View base (js/lib/view.js) owns show, hide, reload on
// reconnect and the stale mark for every view: a visible view reloads
// when the connection opens again, a hidden one is marked stale and loads
// when next shown, a fresh one shown again does not load twice, and a view
// that keeps its data while hidden (keep) loads again only once changed.
func TestDashboardViewBase(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	b := newBrowser(t)
	b.login(h)
	src := "/ui/v-" + uiAssets().version + "/js/lib/view.js" // the page's own module instance
	got := js[[]string](b, `(async () => {
  const { View } = await import(`+jsString(src)+`);
  const rpc = new EventTarget();
  const open = () => rpc.dispatchEvent(new Event('open'));
  class Counted extends View { async load() { this.loads = (this.loads || 0) + 1; } }
  const v = new Counted({ rpc }), k = new Counted({ rpc }, { keep: true });
  const log = [];
  const snap = (what) => log.push(what + ': ' + (v.loads || 0) + (v.stale ? ' stale' : '') + ', ' + (k.loads || 0) + (k.stale ? ' stale' : ''));
  const both = (f) => { f(v); f(k); };
  open(); snap('open while hidden');
  both((x) => x.show(new URLSearchParams())); snap('shown');
  both((x) => x.show(new URLSearchParams())); snap('shown again');
  open(); snap('open while shown');
  both((x) => x.hide()); snap('hidden');
  open(); snap('open while hidden again');
  both((x) => x.show(new URLSearchParams())); snap('back');
  both((x) => x.hide()); k.changed(); snap('changed while hidden');
  both((x) => x.show(new URLSearchParams())); snap('back again');
  return log;
})()`)
	want := []string{
		"open while hidden: 0 stale, 0 stale",
		"shown: 1, 1",
		"shown again: 1, 1",
		"open while shown: 2, 2",
		"hidden: 2 stale, 2",
		"open while hidden again: 2 stale, 2 stale",
		"back: 3, 3",
		"changed while hidden: 3 stale, 3 stale",
		"back again: 4, 4",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("View's loads and stale marks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.noPageErrors()
}
