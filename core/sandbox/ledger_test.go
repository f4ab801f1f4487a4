package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/links"
)

// memLedger is a map-backed LinkLedger; fail makes RecordLink fail.
type memLedger struct {
	mu   sync.Mutex
	recs map[string]LinkRecord
	fail error
}

func (m *memLedger) RecordLink(_ context.Context, r LinkRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if _, ok := m.recs[r.ID]; !ok {
		m.recs[r.ID] = r
	}
	return nil
}

func (m *memLedger) AnyLinkRevoked(_ context.Context, ids []string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if !m.recs[id].Revoked.IsZero() {
			return true, nil
		}
	}
	return false, nil
}

func (m *memLedger) Links(context.Context, LinkFilter) ([]LinkRecord, error) { return nil, nil }

func (m *memLedger) RevokeLink(_ context.Context, id, by string, at time.Time) (LinkRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id]
	if !ok {
		return r, ErrNoLink
	}
	if r.Revoked.IsZero() {
		r.Revoked, r.RevokedBy = at, by
		m.recs[id] = r
	}
	return r, nil
}

func worldWithLedger(t *testing.T, lg *memLedger) *world {
	return newWorldWith(t, func(w *world, cfg *Config) {
		cfg.Links = LinkConfig{Secret: make([]byte, 32), Expiry: time.Hour, MaxExpiry: 24 * time.Hour, SaveResultMaxKB: 64, Ledger: lg}
	})
}

// A link that could not be recorded is not handed out: the owner could
// neither see nor withdraw it.
func TestLinkNotGivenWhenNotRecorded(t *testing.T) {
	lg := &memLedger{recs: map[string]LinkRecord{}, fail: errors.New("disk full")}
	w := worldWithLedger(t, lg)
	ctx := context.Background()
	os.MkdirAll(filepath.Join(w.dir, "base", "alice", "output"), 0o755)
	os.WriteFile(filepath.Join(w.dir, "base", "alice", "output", "r.txt"), []byte("r"), 0o644)
	l, err := w.box.CreateLink(ctx, alice, LinkArgs{Path: "output/r.txt"})
	if errs.KindOf(err) != errs.IO || l.Token != "" {
		t.Errorf("CreateLink with a failing ledger: %+v, %v; want no link and an io error", l, err)
	}
	res, err := w.box.SaveResult(ctx, alice, ResultArgs{Title: "T", Content: "x"})
	if errs.KindOf(err) != errs.IO || res.Link.Token != "" {
		t.Errorf("SaveResult with a failing ledger: %+v, %v", res, err)
	}
	if ev := w.sink.last(); ev.Op != "result.save" || ev.Error == "" {
		t.Errorf("audit: %+v", ev)
	}
}

// Revocation ids: a link's own, and every folder above it with the same
// expiry; never a folder link with another expiry or scope.
func TestRevocationIDs(t *testing.T) {
	exp := time.Unix(1_800_000_000, 0)
	c := links.Claims{Scope: "alice", Path: "output/sub/a.txt", Expires: exp}
	ids := revocationIDs("k1", c)
	want := []links.Claims{c,
		{Scope: "alice", Path: "output/sub", Folder: true, Expires: exp},
		{Scope: "alice", Path: "output", Folder: true, Expires: exp},
		{Scope: "alice", Path: ".", Folder: true, Expires: exp}}
	if len(ids) != len(want) {
		t.Fatalf("ids %v", ids)
	}
	for i, w := range want {
		if ids[i] != LinkID("k1", w) {
			t.Errorf("id %d: %s, want that of %+v", i, ids[i], w)
		}
	}
	for _, other := range []links.Claims{
		{Scope: "bob", Path: "output", Folder: true, Expires: exp},
		{Scope: "alice", Path: "output", Folder: true, Expires: exp.Add(time.Second)},
		{Scope: "alice", Path: "output", Folder: false, Expires: exp},
		{Scope: "alice", Path: "out", Folder: true, Expires: exp},
	} {
		for _, id := range ids {
			if id == LinkID("k1", other) || id == LinkID("k2", c) {
				t.Errorf("%+v would close %s", other, c.Path)
			}
		}
	}
	// Length-prefixed: moving a byte between scope and path changes the id.
	if LinkID("k", links.Claims{Scope: "ab", Path: "c"}) == LinkID("k", links.Claims{Scope: "a", Path: "bc"}) ||
		LinkID("ka", links.Claims{Scope: "b"}) == LinkID("k", links.Claims{Scope: "ab"}) {
		t.Error("ids collide across the scope/path boundary")
	}
}
