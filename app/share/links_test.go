package share

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/errs"
	"corral/core/links"
	"corral/core/sandbox"
)

// fakeServer is a Server with fixed addresses.
type fakeServer struct{ base, public, lan string }

func (s fakeServer) BaseURL() string   { return s.base }
func (s fakeServer) PublicURL() string { return s.public }
func (s fakeServer) LANURL() string    { return s.lan }

// fakeLinks is a Maker that signs every path with the same token.
type fakeLinks struct{ made []links.LinkArgs }

func (f *fakeLinks) CreateLink(ctx context.Context, c sandbox.Caller, a links.LinkArgs) (links.Link, error) {
	f.made = append(f.made, a)
	return links.Link{Path: a.Path, Token: "t", Expires: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}, nil
}

func (f *fakeLinks) SaveResult(ctx context.Context, c sandbox.Caller, a links.ResultArgs) (links.Result, error) {
	return links.Result{Link: links.Link{Path: "/share/r.md", Token: "t"}, Content: a.Content}, nil
}

func wireOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readable is wireOf with the & of URLs as written (encoding/json
// writes \u0026).
func readable(t *testing.T, v any) string {
	t.Helper()
	return strings.ReplaceAll(wireOf(t, v), `\u0026`, "&")
}

func TestLinksTellOnlyTheOwnerTheReach(t *testing.T) {
	box := &fakeLinks{}
	var rotatedBy string
	x := Links{Box: box, Server: fakeServer{base: "http://127.0.0.1:1"},
		Lifetime: func(raw json.RawMessage) (time.Duration, error) { return time.Duration(len(raw)) * time.Hour, nil },
		Rotate:   func(ctx context.Context, by string) error { rotatedBy = by; return nil },
	}
	a := wire.LinkArgs{Path: "/home/ann/a.txt", ExpiresIn: json.RawMessage("1")}
	agent, err := x.Create(t.Context(), sandbox.Caller{Client: "bot"}, a)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := x.Create(t.Context(), sandbox.Caller{Client: "owner", Owner: true}, a)
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, agent); strings.Contains(w, "local_only") {
		t.Errorf("an agent was told the reach: %s", w)
	}
	if w := readable(t, owner); w != `{"expiresAt":"2026-05-06T07:08:09Z","local_only":true,"path":"/home/ann/a.txt","url":"http://127.0.0.1:1/files/out?`+(links.Link{Path: a.Path, Token: "t"}).Query()+`"}` {
		t.Errorf("the owner was told %s", w)
	}
	if len(box.made) != 2 || box.made[0].ExpiresIn != time.Hour {
		t.Errorf("links asked for: %+v", box.made)
	}
	if _, err := x.RotateAll(t.Context(), sandbox.Caller{Client: "owner", Owner: true}, RotateArgs{}); err != nil || rotatedBy != "owner" {
		t.Errorf("links.rotate: err %v, by %q", err, rotatedBy)
	}
	x.Rotate = nil
	if _, err = x.RotateAll(t.Context(), sandbox.Caller{Client: "owner", Owner: true}, RotateArgs{}); errs.KindOf(err) != errs.Unavailable {
		t.Errorf("links.rotate without a key to rotate: %v, want unavailable", err)
	}
}

// Where links point and what the owner is told, by what the server has:
// public_url wins over the LAN, the LAN over the listening address.
func TestLinksPointWhereTheyOpen(t *testing.T) {
	l := links.Link{Path: "a", Token: "t"}
	q := "/files/out?" + l.Query()
	for _, tc := range []struct {
		srv        fakeServer
		url, reach string
	}{
		{fakeServer{base: "http://127.0.0.1:1"}, "http://127.0.0.1:1" + q, `{"local_only":true}`},
		{fakeServer{base: "http://192.168.1.5:1"}, "http://192.168.1.5:1" + q, `{"local_only":false}`},
		{fakeServer{base: "http://127.0.0.1:1", lan: "https://192.168.1.5:2"}, "https://192.168.1.5:2" + q, `{"lan_url":"https://192.168.1.5:2` + q + `","local_only":false}`},
		{fakeServer{base: "https://c.example", public: "https://c.example", lan: "https://192.168.1.5:2"}, "https://c.example" + q, `{"local_only":false}`},
	} {
		x := Links{Server: tc.srv}
		if got := x.URL(l); got != tc.url {
			t.Errorf("%+v: URL %s, want %s", tc.srv, got, tc.url)
		}
		if got := readable(t, x.reach(l)); got != tc.reach {
			t.Errorf("%+v: reach %s, want %s", tc.srv, got, tc.reach)
		}
	}
}

// fakeLedger answers SharedLinks with fixed records and RevokeLink by
// revoking the one asked for.
type fakeLedger struct {
	recs  []links.SharedLink
	asked links.LinkFilter
}

func (f *fakeLedger) SharedLinks(ctx context.Context, lf links.LinkFilter) ([]links.SharedLink, error) {
	f.asked = lf
	return f.recs, nil
}

func (f *fakeLedger) RevokeLink(ctx context.Context, c sandbox.Caller, id string) (links.LinkRecord, error) {
	for _, r := range f.recs {
		if r.ID == id {
			r.Revoked, r.RevokedBy = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), c.Client
			return r.LinkRecord, nil
		}
	}
	return links.LinkRecord{}, errors.New("no such link")
}

func TestLinksListPagesAndStates(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	id := func(c byte) string { return strings.Repeat(string(c), 64) }
	rec := func(c byte, created, expires time.Time) links.LinkRecord {
		return links.LinkRecord{ID: id(c), Scope: "ann", Path: "output/" + string(c), MadeBy: "bot", Created: created, Expires: expires}
	}
	live := links.Link{Path: "output/a", Token: "t"}
	l := &fakeLedger{recs: []links.SharedLink{
		{LinkRecord: rec('a', now.Add(-time.Minute), now.Add(time.Hour)), Link: &live},
		{LinkRecord: rec('b', now.Add(-2*time.Minute), now.Add(-time.Second))},
		{LinkRecord: rec('c', now.Add(-3*time.Minute), now.Add(time.Hour)), Rotated: true},
	}}
	x := Links{Ledger: l, Server: fakeServer{base: "http://127.0.0.1:1"}, Now: func() time.Time { return now }}
	page, err := x.List(t.Context(), sandbox.Caller{}, ListArgs{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l.asked.Limit != 3 || len(page.Links) != 2 || page.NextCursor != linkCursor(l.recs[1].LinkRecord) {
		t.Fatalf("asked %+v, got %+v", l.asked, page)
	}
	if a, b := page.Links[0], page.Links[1]; a.State != "active" || a.URL != x.URL(live) || b.State != "expired" || b.URL != "" {
		t.Errorf("rows: %+v", page.Links)
	}
	if _, err := x.List(t.Context(), sandbox.Caller{}, ListArgs{Cursor: page.NextCursor}); err != nil || l.asked.After == nil || l.asked.After.ID != id('b') {
		t.Errorf("the next page: %v, after %+v", err, l.asked.After)
	}
	for _, bad := range []ListArgs{{Limit: -1}, {Limit: maxLinksPage + 1}, {Cursor: "12.zz"}} {
		if _, err := x.List(t.Context(), sandbox.Caller{}, bad); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("%+v: %v, want invalid params", bad, err)
		}
	}
	got, err := x.Revoke(t.Context(), sandbox.Caller{Client: "owner", Owner: true}, RevokeArgs{ID: id('a')})
	if err != nil || got.State != "revoked" || got.RevokedBy != "owner" || got.URL != "" {
		t.Errorf("link.revoke: %+v, %v", got, err)
	}
}

// TestResultsKeepTheMapBytes pins each typed result to the bytes of the
// map it replaced, so a client sees the same answer, field for field.
func TestResultsKeepTheMapBytes(t *testing.T) {
	content, view, empty := "# Report", "https://x/l?s=1&view=1", ""
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	for _, tc := range []struct {
		name  string
		typed any
		old   map[string]any
	}{
		{"link.create agent", LinkResult{URL: "u", Path: "p", ExpiresAt: at}, map[string]any{"url": "u", "path": "p", "expiresAt": at}},
		{"link.create owner local", LinkResult{URL: "u", Path: "p", ExpiresAt: at, Reach: &Reach{LocalOnly: true}},
			map[string]any{"url": "u", "path": "p", "expiresAt": at, "local_only": true}},
		{"link.create owner lan", LinkResult{URL: "u", Path: "p", ExpiresAt: at, Reach: &Reach{LanURL: "https://l"}},
			map[string]any{"url": "u", "path": "p", "expiresAt": at, "lan_url": "https://l", "local_only": false}},
		{"result.save html", Saved{URL: "u", Path: "p", ExpiresAt: at}, map[string]any{"path": "p", "url": "u", "expiresAt": at}},
		{"result.save markdown", Saved{URL: "u", Path: "p", ExpiresAt: at, Content: &content, ViewURL: &view},
			map[string]any{"path": "p", "url": "u", "expiresAt": at, "content": content, "view_url": view}},
		{"result.save empty markdown", Saved{URL: "u", Path: "p", ExpiresAt: at, Content: &empty, ViewURL: &view},
			map[string]any{"path": "p", "url": "u", "expiresAt": at, "content": "", "view_url": view}},
		{"links.rotate", Rotated{Rotated: true}, map[string]any{"rotated": true}},
	} {
		if got, want := wireOf(t, tc.typed), wireOf(t, tc.old); got != want {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, got, want)
		}
	}
}

func TestLoopbackURL(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080": true, "http://[::1]:1": true, "http://localhost:9": true, "http://a.localhost": true,
		"https://corral.example.org": false, "http://192.168.1.5:8080": false, "::bad": false,
	} {
		if got := loopbackURL(u); got != want {
			t.Errorf("loopbackURL(%q) = %v", u, got)
		}
	}
}

// FuzzLinkCursor: any cursor text is refused or read back to itself; a
// cursor made from a record reads back to that record.
func FuzzLinkCursor(f *testing.F) {
	f.Add("1800000000000000000." + strings.Repeat("ab", 32))
	f.Add("-1." + strings.Repeat("0", 64))
	f.Add("12.zz")
	f.Fuzz(func(t *testing.T, c string) {
		r, ok := parseLinkCursor(c)
		if !ok {
			return
		}
		back, ok := parseLinkCursor(linkCursor(r))
		if !ok || !back.Created.Equal(r.Created) || back.ID != r.ID {
			t.Errorf("%q → %+v → %q → %+v", c, r, linkCursor(r), back)
		}
	})
}
