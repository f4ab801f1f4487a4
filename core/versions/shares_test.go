package versions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/fakeclock"
)

// newClock is a clock the test moves, from the first of January 2026.
func newClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// blobOf is n bytes of content unique to tag.
func blobOf(tag string, n int) []byte {
	return []byte(strings.Repeat(tag+" ", n)[:n])
}

func agentUsage(s *Store, client string) AgentUsage {
	for _, a := range s.Usage().Agents {
		if a.Client == client {
			return a
		}
	}
	return AgentUsage{}
}

// One agent filling its share is refused with a sentence of its own; the
// others and the owner are not.
func TestShareFullRefusesOnlyThatAgent(t *testing.T) {
	t.Parallel()
	s := open(t, Config{MaxBytes: 1000}) // shares of 250 bytes
	for i := range 5 {
		if _, err := s.PutBytes("a", blobOf(fmt.Sprint("a", i), 50)); err != nil {
			t.Fatalf("version %d of a, within its share: %v", i, err)
		}
	}
	_, err := s.PutBytes("a", blobOf("a5", 50))
	if !errors.Is(err, ErrShareFull) || !errors.Is(err, ErrFull) {
		t.Fatalf("a's version over its share: %v, want ErrShareFull", err)
	}
	e := errs.As(err)
	for _, want := range []string{"Your share of Corral's version store is full", "250 bytes", "max_size_mb", "Other agents are not affected"} {
		if e.Kind != errs.Unavailable || !strings.Contains(e.Msg, want) {
			t.Errorf("refusal %q (%s) does not say %q", e.Msg, e.Kind, want)
		}
	}
	// The same content again is no more of a's share: it is kept.
	if _, err := s.PutBytes("a", blobOf("a0", 50)); err != nil {
		t.Errorf("a stored content it already holds: %v", err)
	}
	for i := range 5 {
		if _, err := s.PutBytes("b", blobOf(fmt.Sprint("b", i), 50)); err != nil {
			t.Errorf("b's version %d, a's share full: %v", i, err)
		}
	}
	if _, err := s.PutBytes(Owner, blobOf("owner", 400)); err != nil {
		t.Errorf("the owner's version beside full shares: %v", err)
	}
	if u := agentUsage(s, "a"); u.Bytes != 250 || u.Blobs != 5 || u.Refused != 1 {
		t.Errorf("a's usage %+v, want 250 bytes in 5 versions, 1 refused", u)
	}
	if u := agentUsage(s, "owner"); u.Bytes != 400 {
		t.Errorf("the owner's usage %+v", u)
	}
	if u := s.Usage(); u.AgentShare != 250 || u.Bytes != 900 || len(u.Agents) != 3 || u.Agents[0].Client != "owner" {
		t.Errorf("usage %+v", u)
	}
}

// A full share makes room from the agent's own versions that retention
// lets go, oldest first, never from another agent's, even older ones.
func TestSharePrunesOwnOldVersionsOnly(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := open(t, Config{MaxBytes: 1000, Keep: time.Hour, Clock: clock.Now})
	var bs []string
	for i := range 4 {
		id, err := s.PutBytes("b", blobOf(fmt.Sprint("b", i), 50))
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, id)
	}
	clock.Advance(time.Minute)
	var as []string
	for i := range 5 {
		id, err := s.PutBytes("a", blobOf(fmt.Sprint("a", i), 50))
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, id)
		clock.Advance(time.Minute)
	}
	// Young: nothing may go, so a is refused.
	if _, err := s.PutBytes("a", blobOf("a5", 50)); !errors.Is(err, ErrShareFull) {
		t.Fatalf("a over its share of young versions: %v", err)
	}
	if !strings.Contains(errs.As(s.refusal("a")).Msg, "2026-01-01 01:01 UTC") {
		t.Errorf("the refusal does not say when a's oldest version may go: %q", errs.As(s.refusal("a")).Msg)
	}
	clock.Advance(2 * time.Hour)
	if _, err := s.PutBytes("a", blobOf("a5", 100)); err != nil {
		t.Fatalf("a over its share once its versions are old: %v", err)
	}
	if s.Has(as[0]) || s.Has(as[1]) || !s.Has(as[2]) {
		t.Errorf("a's two oldest versions should have gone, the third stayed: %v %v %v", s.Has(as[0]), s.Has(as[1]), s.Has(as[2]))
	}
	for i, id := range bs {
		if !s.Has(id) {
			t.Errorf("b's version %d was removed to make room for a", i)
		}
	}
	if u := agentUsage(s, "a"); u.Bytes != 250 {
		t.Errorf("a's usage after its prune: %+v", u)
	}
}

// A version two agents hold counts in both shares and stays while one
// still holds it; the shares survive a restart.
func TestSharedVersionsAndRestart(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := open(t, Config{MaxBytes: 400, Keep: time.Hour, Clock: clock.Now}) // shares of 100
	common, err := s.PutBytes("a", blobOf("common", 60))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBytes("b", blobOf("common", 60)); err != nil {
		t.Fatal(err)
	}
	if u := s.Usage(); u.Bytes != 60 || agentUsage(s, "a").Bytes != 60 || agentUsage(s, "b").Bytes != 60 {
		t.Errorf("one version held by two: %+v", u)
	}
	clock.Advance(2 * time.Hour)
	if _, err := s.PutBytes("a", blobOf("a1", 60)); err != nil {
		t.Fatal(err)
	}
	if !s.Has(common) || agentUsage(s, "a").Bytes != 60 || agentUsage(s, "b").Bytes != 60 {
		t.Errorf("a's prune took a version b holds: kept %v, a %+v, b %+v", s.Has(common), agentUsage(s, "a"), agentUsage(s, "b"))
	}
	if _, err := s.PutBytes("a", blobOf("a2", 60)); !errors.Is(err, ErrShareFull) {
		t.Fatalf("a over its share: %v", err)
	}
	s2 := open(t, Config{Dir: s.Dir(), MaxBytes: 400, Keep: time.Hour, Clock: clock.Now})
	if a, b := agentUsage(s2, "a"), agentUsage(s2, "b"); a.Bytes != 60 || a.Blobs != 1 || b.Bytes != 60 {
		t.Errorf("reopened: a %+v, b %+v", a, b)
	}
	if _, err := s2.PutBytes("a", blobOf("a2", 60)); !errors.Is(err, ErrShareFull) {
		t.Errorf("a over its share after a restart: %v", err)
	}
}

// When others have filled the whole store with young versions, an agent
// under its floor still keeps its versions.
func TestFloorBesideAFullStore(t *testing.T) {
	t.Parallel()
	s := open(t, Config{MaxBytes: 800, AgentShare: 400}) // floor 50
	for _, who := range []string{"a", "b"} {
		for i := range 4 {
			if _, err := s.PutBytes(who, blobOf(fmt.Sprint(who, i), 100)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.PutBytes("c", blobOf("c0", 40)); err != nil {
		t.Errorf("c, under its floor, beside a full store: %v", err)
	}
	if _, err := s.PutBytes("c", blobOf("c1", 40)); !errors.Is(err, ErrFull) || errors.Is(err, ErrShareFull) {
		t.Errorf("c, over its floor, beside a store full of young versions: %v, want ErrFull", err)
	}
	if _, err := s.PutBytes(Owner, blobOf("owner", 300)); err != nil {
		t.Errorf("the owner's version beside a store full of young versions: %v", err)
	}
}

// Many writes of one agent at once never take it over its share.
func TestShareHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := open(t, Config{MaxBytes: 4000}) // share 1000
	var wg sync.WaitGroup
	var kept atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if _, err := s.PutBytes("a", blobOf(fmt.Sprint(g, "-", i), 50)); err == nil {
					kept.Add(1)
				} else if !errors.Is(err, ErrShareFull) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if u := agentUsage(s, "a"); u.Bytes > 1000 || u.Bytes != 50*kept.Load() || kept.Load() != 20 {
		t.Errorf("a's usage %+v after %d versions kept, share 1000", u, kept.Load())
	}
}

// refusal is the sentence who gets now when its share is full (tests).
func (s *Store) refusal(who string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shareFull(s.holder(who), 1)
}

// A version larger than a whole share is refused with a sentence that
// says so, not that the share is full.
func TestVersionOverAWholeShare(t *testing.T) {
	t.Parallel()
	s := open(t, Config{MaxBytes: 1000})
	_, err := s.PutBytes("a", blobOf("big", 300))
	if e := errs.As(err); !errors.Is(err, ErrShareFull) || !strings.Contains(e.Msg, "larger than your whole share") || !strings.Contains(e.Msg, "(250 bytes)") {
		t.Errorf("a version over a whole share: %v", err)
	}
	if u := s.Usage(); u.Blobs != 0 || agentUsage(s, "a").Refused != 1 {
		t.Errorf("after the refusal: %+v", u)
	}
}

// The owner forgets an agent's versions (older than a time, or all):
// its share has room again, and versions another agent holds stay.
func TestForget(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := open(t, Config{MaxBytes: 1000, Clock: clock.Now}) // shares of 250
	common, _ := s.PutBytes("b", blobOf("common", 50))
	var ids []string
	for i := range 4 {
		content := blobOf(fmt.Sprint("a", i), 50)
		if i == 0 {
			content = blobOf("common", 50)
		}
		id, err := s.PutBytes("a", content)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		clock.Advance(time.Hour)
	}
	if n, b := s.Forget("a", clock.Now().Add(-150*time.Minute)); n != 2 || b != 100 {
		t.Errorf("forget a's versions older than 2.5 h: %d versions, %d bytes; want 2, 100", n, b)
	}
	if !s.Has(common) || s.Has(ids[1]) || !s.Has(ids[2]) {
		t.Errorf("after the forget: common %v (b holds it), a1 %v, a2 %v", s.Has(common), s.Has(ids[1]), s.Has(ids[2]))
	}
	if n, b := s.Forget("a", time.Time{}); n != 2 || b != 100 || agentUsage(s, "a").Bytes != 0 || agentUsage(s, "b").Bytes != 50 {
		t.Errorf("forget all of a's: %d versions, %d bytes; a %+v, b %+v", n, b, agentUsage(s, "a"), agentUsage(s, "b"))
	}
	if n, _ := s.Forget("nobody", time.Time{}); n != 0 {
		t.Errorf("forget an unknown agent's: %d", n)
	}
	if u := s.Usage(); u.Bytes != 50 || u.Blobs != 1 {
		t.Errorf("usage after forgetting: %+v", u)
	}
}
