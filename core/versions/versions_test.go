package versions

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
)

func open(t *testing.T, cfg Config) *Store {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "versions")
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Identical content is stored once, readable only by the owner, and read
// back byte for byte.
func TestPutDedupAndModes(t *testing.T) {
	t.Parallel()
	s := open(t, Config{})
	a, err := s.PutBytes(Owner, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	var tee bytes.Buffer
	b, err := s.Put(Owner, strings.NewReader("hello"), &tee)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a != Sum([]byte("hello")) || tee.String() != "hello" {
		t.Fatalf("ids %s %s, tee %q", a, b, tee.String())
	}
	if u := s.Usage(); u.Blobs != 1 || u.Bytes != 5 {
		t.Errorf("usage %+v, want one blob of 5 bytes", u)
	}
	got, err := s.Read(a, 100)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q %v", got, err)
	}
	for _, p := range []string{s.Dir(), filepath.Join(s.Dir(), "blobs"), filepath.Dir(s.path(a))} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v %v, want 0700", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(s.path(a)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("blob mode %v %v, want 0600", fi.Mode(), err)
	}
	// A reopened store counts what is there.
	s2 := open(t, Config{Dir: s.Dir()})
	if u := s2.Usage(); u.Blobs != 1 || u.Bytes != 5 {
		t.Errorf("reopened usage %+v", u)
	}
}

func TestTooLargeAndDamaged(t *testing.T) {
	t.Parallel()
	s := open(t, Config{MaxFile: 4})
	if _, err := s.Put(Owner, strings.NewReader("12345"), nil); err != ErrTooLarge {
		t.Fatalf("put of 5 bytes over a 4-byte limit: %v", err)
	}
	if u := s.Usage(); u.Blobs != 0 {
		t.Errorf("a refused put left %+v", u)
	}
	if ents, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
	id, err := s.PutBytes(Owner, []byte("abcd"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.path(id), []byte("abce"), 0o600)
	if _, err := s.Read(id, 10); errs.KindOf(err) != errs.IO {
		t.Errorf("damaged blob read: %v, want io", err)
	}
	for _, bad := range []string{"", "../x", strings.Repeat("A", 64), strings.Repeat("0", 63) + "/"} {
		if _, err := s.Read(bad, 10); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("Read(%q) = %v, want invalid_params", bad, err)
		}
	}
	if _, err := s.Read(strings.Repeat("0", 64), 10); errs.KindOf(err) != errs.NotFound {
		t.Errorf("missing blob: %v", err)
	}
}

// Prune removes what is older than MaxAge, then the oldest until the
// store fits MaxBytes; storing content again renews it.
func TestPrune(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	s := open(t, Config{MaxAge: 48 * time.Hour, MaxBytes: 25, AgentShare: 25, Keep: 30 * time.Minute, Clock: func() time.Time { return time.Unix(0, clock.Load()) }})
	put := func(c string) string {
		id, err := s.PutBytes("a", []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	start := time.Unix(0, clock.Load())
	old := put("0123456789")
	if u := s.Usage(); !u.Oldest.Equal(start) {
		t.Errorf("oldest after the first version: %v, want %v", u.Oldest, start)
	}
	advance(time.Hour)
	mid := put("abcdefghij")
	advance(time.Hour)
	put("0123456789") // renewed: now the newest
	newest := put("ABCDEFGHIJ")
	s.Prune()
	if s.Has(mid) || !s.Has(old) || !s.Has(newest) {
		t.Errorf("over budget: mid kept %v, renewed kept %v, newest kept %v", s.Has(mid), s.Has(old), s.Has(newest))
	}
	// What is left was all stored at the last hour: the oldest says so.
	if u := s.Usage(); !u.Oldest.Equal(start.Add(2 * time.Hour)) {
		t.Errorf("oldest after the prune: %v, want %v", u.Oldest, start.Add(2*time.Hour))
	}
	// Only versions younger than Keep left: a new one that does not fit
	// is refused rather than one of them removed.
	if _, err := s.PutBytes("a", []byte("klmnopqrst")); !errors.Is(err, ErrFull) || !s.Has(newest) {
		t.Errorf("a version over budget beside young ones: %v, newest kept %v", err, s.Has(newest))
	}
	advance(72 * time.Hour)
	s.Prune()
	if u := s.Usage(); u.Blobs != 0 || u.Bytes != 0 || !u.Oldest.IsZero() {
		t.Errorf("after MaxAge: %+v", u)
	}
}

// The same new content stored by several writers at once is one blob and
// counted once: the budget the owner set is not used up by versions that
// are not there.
func TestConcurrentPutCountsOnce(t *testing.T) {
	t.Parallel()
	s := open(t, Config{})
	const writers, rounds = 8, 100
	var want int64
	for round := range rounds {
		content := bytes.Repeat([]byte(fmt.Sprintf("content %d ", round)), 1<<10)
		want += int64(len(content))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range writers {
			wg.Go(func() {
				<-start
				if id, err := s.PutBytes(Owner, content); err != nil || id != Sum(content) {
					t.Errorf("PutBytes: %q, %v; want %q", id, err, Sum(content))
				}
			})
		}
		close(start)
		wg.Wait()
	}
	if u := s.Usage(); u.Blobs != rounds || u.Bytes != want {
		t.Errorf("usage after %d writers stored the same content, %d times: %d blobs, %d bytes; want %d blobs, %d bytes", writers, rounds, u.Blobs, u.Bytes, rounds, want)
	}
}
