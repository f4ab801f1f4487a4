package links

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/core/testkit/auditmem"
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

func (m *memLedger) RevokedLinks(_ context.Context, kid, scope string, exp time.Time) ([]LinkRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []LinkRecord
	for _, r := range m.recs {
		if !r.Revoked.IsZero() && r.KeyID == kid && r.Scope == scope && r.Expires.Equal(exp) {
			out = append(out, r)
		}
	}
	return out, nil
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

// world is a sandbox for alice and bob with links over it.
type world struct {
	dir   string
	box   *sandbox.Sandbox
	links *Service
	sink  *auditmem.Log
}

var alice = sandbox.Caller{Client: "alice-agent", User: "alice"}

func worldWithLedger(t *testing.T, lg *memLedger) *world {
	now := time.Now()
	w := &world{dir: t.TempDir(), sink: &auditmem.Log{}}
	layout := paths.Layout{Base: filepath.Join(w.dir, "base"), SharedDir: "share", OutputDir: "output", Home: w.dir}
	box, err := sandbox.Open(sandbox.Config{Layout: layout, Users: []string{"alice", "bob"}, Audit: w.sink,
		Clock: func() time.Time { return now }}) // one second for the whole test
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	w.box = box
	w.links, err = New(box, LinkConfig{Secret: make([]byte, 32), Expiry: time.Hour, MaxExpiry: 24 * time.Hour, SaveResultMaxKB: 64, Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A link that could not be recorded is not handed out: the owner could
// neither see nor withdraw it.
func TestLinkNotGivenWhenNotRecorded(t *testing.T) {
	lg := &memLedger{recs: map[string]LinkRecord{}, fail: errors.New("disk full")}
	w := worldWithLedger(t, lg)
	ctx := context.Background()
	os.MkdirAll(filepath.Join(w.dir, "base", "alice", "output"), 0o755)
	os.WriteFile(filepath.Join(w.dir, "base", "alice", "output", "r.txt"), []byte("r"), 0o644)
	l, err := w.links.CreateLink(ctx, alice, LinkArgs{Path: "output/r.txt"})
	if errs.KindOf(err) != errs.IO || l.Token != "" {
		t.Errorf("CreateLink with a failing ledger: %+v, %v; want no link and an io error", l, err)
	}
	res, err := w.links.SaveResult(ctx, alice, ResultArgs{Title: "T", Content: "x"})
	if errs.KindOf(err) != errs.IO || res.Link.Token != "" {
		t.Errorf("SaveResult with a failing ledger: %+v, %v", res, err)
	}
	if ev := w.sink.Last(); ev.Op != "result.save" || ev.Error == "" {
		t.Errorf("audit: %+v", ev)
	}
}

// closes: a revoked record withdraws its own link and, as a folder, every
// link below it; never a sibling whose name starts the same, nor a link
// above it.
func TestCloses(t *testing.T) {
	c := Claims{Scope: "alice", Path: "output/sub/a.txt"}
	for _, tc := range []struct {
		r    LinkRecord
		want bool
	}{
		{LinkRecord{Path: "output/sub/a.txt"}, true},
		{LinkRecord{Path: "output/sub", Folder: true}, true},
		{LinkRecord{Path: "output", Folder: true}, true},
		{LinkRecord{Path: ".", Folder: true}, true},
		{LinkRecord{Path: "output/sub"}, false}, // a file link does not cover what is below it
		{LinkRecord{Path: "output/su", Folder: true}, false},
		{LinkRecord{Path: "output/sub/a.txt/b", Folder: true}, false},
		{LinkRecord{Path: "output/sub/a.tx", Folder: true}, false},
		{LinkRecord{Path: "outpu", Folder: true}, false},
	} {
		if got := closes(tc.r, c); got != tc.want {
			t.Errorf("%+v closes %s: %v, want %v", tc.r, c.Path, got, tc.want)
		}
	}
	if closes(LinkRecord{Path: "output"}, Claims{Path: "output", Folder: true}) {
		t.Error("a revoked file link closed a folder link of the same path")
	}
}

// A link made again in the same second after the owner withdrew it would
// be the same, dead token: it is refused, not handed out.
func TestWithdrawnLinkNotHandedOutAgain(t *testing.T) {
	lg := &memLedger{recs: map[string]LinkRecord{}}
	w := worldWithLedger(t, lg)
	ctx := context.Background()
	os.MkdirAll(filepath.Join(w.dir, "base", "alice", "output"), 0o755)
	os.WriteFile(filepath.Join(w.dir, "base", "alice", "output", "r.txt"), []byte("r"), 0o644)
	l, err := w.links.CreateLink(ctx, alice, LinkArgs{Path: "output/r.txt"})
	if err != nil {
		t.Fatal(err)
	}
	id := LinkID(l.KeyID, Claims{Scope: l.Scope, Path: l.Path, Expires: l.Expires})
	if _, err := w.links.RevokeLink(ctx, sandbox.Caller{Client: "owner", Owner: true, User: "default"}, id); err != nil {
		t.Fatal(err)
	}
	again, err := w.links.CreateLink(ctx, alice, LinkArgs{Path: "output/r.txt"})
	if errs.KindOf(err) != errs.Conflict || again.Token != "" {
		t.Errorf("the withdrawn link handed out again: %+v, %v", again, err)
	}
}
