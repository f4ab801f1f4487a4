package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/app/share"
	"corral/app/wire"
)

type linksPage struct {
	Links      []share.Row `json:"links"`
	NextCursor string      `json:"next_cursor"`
}

// The owner lists the links agents made and withdraws one: it stops
// opening in every form, the other keeps working, and the log says who.
func TestSharedLinksRevokeOne(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, owner := h.dial(aliceKey), h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "output/a b.md", "content", "# A\n"))
	rpcCall[any](t, alice, "file.write", m("path", "output/keep.txt", "content", "keep"))
	rpcCall[any](t, alice, "file.write", m("path", "output/sub/deep.txt", "content", "deep"))
	revoke := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/a b.md"))
	keep := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/keep.txt"))
	folder := rpcCall[map[string]any](t, alice, "link.create", m("path", "output"))
	revokeURL, keepURL, folderURL := revoke["url"].(string), keep["url"].(string), folder["url"].(string)

	for _, c := range []string{"links.list", "link.revoke"} {
		if e := callErr(t, alice, c, m("id", strings.Repeat("0", 64))); e.Kind() != "forbidden" {
			t.Errorf("agent's %s: %+v, want forbidden", c, e)
		}
	}
	list := rpcCall[linksPage](t, owner, "links.list", nil)
	if len(list.Links) != 3 || list.Links[0].Path != "output" || !list.Links[0].Folder || list.Links[2].Path != "output/a b.md" {
		t.Fatalf("links.list: %+v", list)
	}
	for _, l := range list.Links {
		if l.State != "active" || l.MadeBy != "alice-agent" || l.Scope != "alice" || l.URL == "" || len(l.ID) != 64 {
			t.Errorf("row %+v", l)
		}
	}
	if list.Links[2].URL != revokeURL {
		t.Errorf("listed url %q, handed out %q", list.Links[2].URL, revokeURL)
	}
	// A folder page's entry link, taken before the folder link is withdrawn.
	deep := h.url + "/files/out?path=output/sub/deep.txt&token=" + url.QueryEscape(tokenOf(t, folderURL))

	got := rpcCall[share.Row](t, owner, "link.revoke", m("id", list.Links[2].ID))
	if got.State != "revoked" || got.RevokedBy != "owner" || got.URL != "" {
		t.Errorf("link.revoke: %+v", got)
	}
	again := rpcCall[share.Row](t, owner, "link.revoke", m("id", list.Links[2].ID))
	if again.RevokedAt != got.RevokedAt {
		t.Errorf("second revoke moved the time: %s → %s", got.RevokedAt, again.RevokedAt)
	}
	if e := callErr(t, owner, "link.revoke", m("id", strings.Repeat("a", 64))); e.Kind() != "not_found" {
		t.Errorf("unknown id: %+v", e)
	}

	// Every way of asking for the withdrawn link is refused.
	u, _ := url.Parse(revokeURL)
	q := u.Query()
	forms := map[string][]string{
		"plain":     {revokeURL},
		"raw":       {revokeURL + "&raw=1"},
		"view":      {revokeURL + "&view=1"},
		"reordered": {h.url + "/files/out?token=" + url.QueryEscape(q.Get("token")) + "&path=" + url.QueryEscape(q.Get("path"))},
		"escaped":   {h.url + "/files/out?path=output%2Fa%20b.md&token=" + url.QueryEscape(q.Get("token"))},
		"range":     {revokeURL, "Range", "bytes=0-1"},
		"browser":   {revokeURL, "Accept", "text/html"},
	}
	for name, f := range forms {
		resp, body := get(t, f[0], f[1:]...)
		if resp.StatusCode != http.StatusGone || !strings.Contains(body, "withdrawn") || strings.Contains(body, "# A") {
			t.Errorf("%s: %d %q, want 410 saying it was withdrawn", name, resp.StatusCode, body)
		}
		checkSecurityHeaders(t, resp)
	}
	if resp, body := get(t, revokeURL, "Accept", "text/html"); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "<h1>This link was withdrawn</h1>") {
		t.Errorf("browser page: %s %q", resp.Header.Get("Content-Type"), body)
	}
	req, _ := http.NewRequest("HEAD", revokeURL, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusGone {
		t.Errorf("HEAD: %v %v", resp, err)
	}
	if resp, body := get(t, keepURL); resp.StatusCode != 200 || body != "keep" {
		t.Errorf("the other link: %d %q", resp.StatusCode, body)
	}
	if resp, body := get(t, deep); resp.StatusCode != 200 || body != "deep" {
		t.Errorf("entry of the still-shared folder: %d %q", resp.StatusCode, body)
	}

	// Withdrawing the folder link closes the entry links its page gave out.
	rpcCall[share.Row](t, owner, "link.revoke", m("id", list.Links[0].ID))
	if resp, _ := get(t, deep); resp.StatusCode != http.StatusGone {
		t.Errorf("entry link of a withdrawn folder: %d, want 410", resp.StatusCode)
	}

	active := rpcCall[linksPage](t, owner, "links.list", nil)
	all := rpcCall[linksPage](t, owner, "links.list", m("all", true))
	if len(active.Links) != 1 || active.Links[0].Path != "output/keep.txt" || len(all.Links) != 3 {
		t.Errorf("after revoking: active %+v, all %d", active.Links, len(all.Links))
	}
	// Pages of one, in order, with the cursor.
	var paged []string
	for cur := ""; ; {
		p := rpcCall[linksPage](t, owner, "links.list", m("all", true, "limit", 1, "cursor", cur))
		for _, l := range p.Links {
			paged = append(paged, l.Path)
		}
		if cur = p.NextCursor; cur == "" {
			break
		}
	}
	if strings.Join(paged, ",") != "output,output/keep.txt,output/a b.md" {
		t.Errorf("paged: %v", paged)
	}
	if e := callErr(t, owner, "links.list", m("cursor", "12.zz")); e.Kind() != "invalid_params" {
		t.Errorf("bad cursor: %+v", e)
	}

	type auditPage struct {
		Events []wire.Event `json:"events"`
	}
	ev := rpcCall[auditPage](t, owner, "audit.query", m("op", "link.revoke"))
	if len(ev.Events) < 2 || ev.Events[0].Target != "output" || ev.Events[0].User != "alice" {
		t.Errorf("link.revoke events: %+v", ev.Events)
	}
	refused := rpcCall[auditPage](t, owner, "audit.query", m("op", "files.out", "decision", "deny"))
	if len(refused.Events) == 0 || !strings.Contains(refused.Events[0].Error, "withdrawn") {
		t.Errorf("refused opens: %+v", refused.Events)
	}
}

func tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// A rotation withdraws every link: the list does not offer an old link as
// open, nor a fresh URL for it signed under the new key (an attack that
// worked: the listed URL opened the rotated-away file).
func TestSharedLinksAfterRotation(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, owner := h.dial(aliceKey), h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "output/a.txt", "content", "a"))
	old := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/a.txt"))["url"].(string)
	rpcCall[any](t, owner, "links.rotate", nil)
	if resp, _ := get(t, old); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("old link after rotation: %d", resp.StatusCode)
	}
	if l := rpcCall[linksPage](t, owner, "links.list", nil).Links; len(l) != 0 {
		t.Errorf("active after rotation: %+v", l)
	}
	all := rpcCall[linksPage](t, owner, "links.list", m("all", true)).Links
	if len(all) != 1 || all[0].State != "rotated" || all[0].URL != "" || all[0].LANURL != "" {
		t.Errorf("all after rotation: %+v", all)
	}
	fresh := rpcCall[map[string]any](t, alice, "link.create", m("path", "output/a.txt"))["url"].(string)
	if l := rpcCall[linksPage](t, owner, "links.list", nil).Links; len(l) != 1 || l[0].URL != fresh {
		t.Errorf("the new link: %+v, want %s", l, fresh)
	}
}
