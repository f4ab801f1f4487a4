package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"corral/core/links"
)

// The ledger on real SQLite: newest first with ties broken by id, pages
// that neither skip nor repeat, revocation kept across a reopen and
// never moved by a second revoke.
func TestLinkLedger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "corral.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1_800_000_000, 0).UTC()
	var want []string // newest first
	for i := range 7 {
		r := links.LinkRecord{ID: fmt.Sprintf("%064x", i), KeyID: "k1", Scope: "alice", Path: fmt.Sprintf("output/%d.txt", i), MadeBy: "alice-agent",
			Created: base.Add(time.Duration(i/2) * time.Second), Expires: base.Add(time.Hour)} // two per second: ties
		switch i {
		case 6:
			r.Expires = base.Add(time.Second) // expired by "now" below
		case 4:
			r.KeyID = "k0" // made under a key rotated since
		}
		if err := st.RecordLink(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := st.RecordLink(ctx, links.LinkRecord{ID: r.ID, Scope: "x", Path: "y", Created: base, Expires: base}); err != nil {
			t.Fatal(err) // the same link again keeps its first record
		}
		want = append([]string{r.Path}, want...)
	}
	now := base.Add(time.Minute)
	r, err := st.RevokeLink(ctx, fmt.Sprintf("%064x", 2), "owner", now)
	if err != nil || r.Path != "output/2.txt" || !r.Revoked.Equal(now) || r.RevokedBy != "owner" {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := st.RevokeLink(ctx, "nope", "owner", now); !errors.Is(err, links.ErrNoLink) {
		t.Errorf("unknown id: %v", err)
	}
	st.Close()
	if st, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, _ = st.RevokeLink(ctx, fmt.Sprintf("%064x", 2), "device:phone", now.Add(time.Hour))
	if !r.Revoked.Equal(now) || r.RevokedBy != "owner" {
		t.Errorf("second revoke changed the first: %+v", r)
	}
	for _, tc := range []struct {
		kid, scope string
		exp        time.Time
		want       []string
	}{
		{"k1", "alice", base.Add(time.Hour), []string{"output/2.txt"}},
		{"k0", "alice", base.Add(time.Hour), nil},
		{"k1", "bob", base.Add(time.Hour), nil},
		{"k1", "alice", base.Add(time.Second), nil},
	} {
		got, err := st.RevokedLinks(ctx, tc.kid, tc.scope, tc.exp)
		var paths []string
		for _, r := range got {
			paths = append(paths, r.Path)
		}
		if err != nil || !slices.Equal(paths, tc.want) {
			t.Errorf("RevokedLinks(%s, %s, %v) = %v, %v; want %v", tc.kid, tc.scope, tc.exp, paths, err, tc.want)
		}
	}
	page := func(all bool, limit int) []string {
		var out []string
		f := links.LinkFilter{All: all, Now: now, KeyID: "k1", Limit: limit}
		for {
			recs, err := st.Links(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				out = append(out, r.Path)
			}
			if len(recs) < limit {
				return out
			}
			f.After = &recs[len(recs)-1]
		}
	}
	active := slices.DeleteFunc(slices.Clone(want), func(p string) bool { return p == "output/2.txt" || p == "output/4.txt" || p == "output/6.txt" })
	for _, limit := range []int{1, 2, 3, 100} {
		if got := page(true, limit); !slices.Equal(got, want) {
			t.Errorf("all, pages of %d: %v, want %v", limit, got, want)
		}
		if got := page(false, limit); !slices.Equal(got, active) {
			t.Errorf("active, pages of %d: %v, want %v", limit, got, active)
		}
	}
}
