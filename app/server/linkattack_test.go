package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/app/share"
)

// Attacks on a withdrawn link from outside: every spelling of the request,
// the folder's crumbs and sub-pages, a link made again in the same second,
// and the same path under another scope.
func TestSharedLinksRevokedEverySpelling(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, bob, owner := h.dial(aliceKey), h.dial(bobKey), h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "output/sub/deep.txt", "content", "deep"))
	rpcCall[any](t, alice, "file.write", m("path", "share/both.txt", "content", "both"))
	file := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/sub/deep.txt"))["url"].(string)
	folder := rpcCall[map[string]any](t, alice, "link.create", m("path", "output"))["url"].(string)
	shareA := rpcCall[map[string]any](t, alice, "link.create", m("path", "share/both.txt"))["url"].(string)
	shareB := rpcCall[map[string]any](t, bob, "link.create", m("path", "share/both.txt"))["url"].(string)
	list := rpcCall[linksPage](t, owner, "links.list", nil)
	ids := map[string]string{}
	for _, l := range list.Links {
		ids[l.Scope+":"+l.Path] = l.ID
	}
	for _, k := range []string{"alice:output/sub/deep.txt", "alice:output", "alice:share/both.txt"} {
		rpcCall[share.Row](t, owner, "link.revoke", m("id", ids[k]))
	}
	ft, dt := url.QueryEscape(tokenOf(t, file)), url.QueryEscape(tokenOf(t, folder))
	base := h.url + "/files/out?"
	for name, u := range map[string]string{
		"dup path":      base + "path=output/sub/deep.txt&path=output/sub/deep.txt&token=" + ft,
		"dup token":     base + "path=output/sub/deep.txt&token=" + ft + "&token=" + ft,
		"trailing /":    base + "path=output/sub/deep.txt/&token=" + ft,
		"dot":           base + "path=./output/sub/deep.txt&token=" + ft,
		"dotdot":        base + "path=output/x/../sub/deep.txt&token=" + ft,
		"double slash":  base + "path=output//sub/deep.txt&token=" + ft,
		"case":          base + "path=OUTPUT/sub/deep.txt&token=" + ft,
		"all escaped":   base + "%70ath=%6futput%2fsub%2fdeep.txt&token=" + ft,
		"semicolon":     base + "path=output/sub/deep.txt;token=" + ft,
		"folder root":   base + "path=output&token=" + dt,
		"folder crumb":  base + "path=output/sub&token=" + dt,
		"folder child":  base + "path=output/sub/deep.txt&token=" + dt,
		"folder view":   base + "path=output/sub/deep.txt&view=1&token=" + dt,
		"folder slash":  base + "path=output/sub/&token=" + dt,
		"share revoked": shareA,
	} {
		for _, hdr := range [][]string{nil, {"Range", "bytes=0-"}, {"If-None-Match", `"x"`}, {"Accept", "text/html"}} {
			resp, body := get(t, u, hdr...)
			if resp.StatusCode < 400 || strings.Contains(body, "deep") && !strings.Contains(body, "withdrawn") {
				t.Errorf("%s %v: %d %q", name, hdr, resp.StatusCode, body)
			}
		}
	}
	// The same path under another scope is another link: it still opens.
	if resp, body := get(t, shareB); resp.StatusCode != 200 || body != "both" {
		t.Errorf("bob's link to the same path: %d %q", resp.StatusCode, body)
	}
	// The same file linked again in the same second is the same token.
	// It is refused while it would be that token, or works once the
	// second has passed: never handed out dead, never reopening the old.
	raw, err := alice.Call(context.Background(), "link.create", m("path", "output/sub/deep.txt"))
	var again struct{ URL string }
	if err == nil {
		json.Unmarshal(raw, &again)
	}
	switch {
	case err != nil && !strings.Contains(err.Error(), "withdrew"):
		t.Errorf("re-created link refused with %v", err)
	case err == nil && again.URL == file:
		t.Errorf("the withdrawn link handed out again: %s", again.URL)
	case err == nil:
		if resp, body := get(t, again.URL); resp.StatusCode != 200 || body != "deep" {
			t.Errorf("a new link a second later: %d %q", resp.StatusCode, body)
		}
	}
	// Page size and cursor abuse: refused, never a crash.
	for _, p := range []map[string]any{
		m("limit", -1), m("limit", 1<<40), m("limit", "9"), m("limit", 1.5), m("cursor", 7),
		m("cursor", "99999999999999999999."+strings.Repeat("a", 64)), m("cursor", "-5."+strings.Repeat("a", 64)),
		m("cursor", "5."+strings.Repeat("A", 64)), m("all", "yes"),
	} {
		if e := callErr(t, owner, "links.list", p); e.Kind() != "invalid_params" {
			t.Errorf("links.list %v: %+v", p, e)
		}
	}
	for _, c := range []string{"links.list", "link.revoke"} {
		if e := callErr(t, bob, c, m("id", ids["alice:output"], "all", true)); e.Kind() != "forbidden" {
			t.Errorf("agent %s: %+v", c, e)
		}
	}
	if r, _ := http.Get(shareB); r == nil || r.StatusCode != 200 {
		t.Errorf("daemon gone after the abuse")
	}
}
