package patch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// locateSlow is the search as it was before the index: every start
// position tried, exactly and then loosely. The index must answer as it
// does.
func locateSlow(h *Hunk, old []string, lines []fline, p int) (int, *Conflict) {
	for _, a := range h.Anchors {
		j := p
		for j < len(lines) && lines[j].text != a {
			j++
		}
		if j == len(lines) {
			ta := strings.TrimSpace(a)
			for j = p; j < len(lines) && strings.TrimSpace(lines[j].text) != ta; j++ {
			}
		}
		if j == len(lines) {
			return 0, &Conflict{Why: NoAnchor, Line: p, Expected: a}
		}
		p = j + 1
	}
	if len(old) == 0 {
		if len(h.Anchors) > 0 {
			return p, nil
		}
		return max(len(lines), p), nil
	}
	for _, eq := range []func(a, b string) bool{nil, looseEq} {
		for s := p; s+len(old) <= len(lines); s++ {
			if matchAt(old, lines, s, eq) {
				return s, nil
			}
		}
	}
	best, bestN := -1, 0
	for s := p; s < len(lines); s++ {
		if n := prefix(old, lines, s); n > bestN {
			best, bestN = s, n
		}
	}
	if best < 0 {
		return 0, &Conflict{Why: NotFound, Line: p, Expected: old[0]}
	}
	return 0, differs(old, lines, best, bestN, Differs)
}

// TestSearchMatchesSlowSearch: on random files and hunks made of a few
// lines (with trailing and leading blanks), the indexed search finds what
// trying every position finds, conflicts included.
func TestSearchMatchesSlowSearch(t *testing.T) {
	words := []string{"a", "a ", "a\t", " a", "b", "b  ", "", " ", "c", "}"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return words[rng.IntN(len(words))] }
	for i := range 20000 {
		lines := make([]fline, rng.IntN(30))
		for j := range lines {
			lines[j] = fline{text: pick(), eol: "\n"}
		}
		h := &Hunk{}
		for range rng.IntN(3) * rng.IntN(2) {
			h.Anchors = append(h.Anchors, pick())
		}
		var old []string
		if rng.IntN(2) == 0 && len(lines) > 0 { // often a piece of the file, changed a little
			s := rng.IntN(len(lines))
			for _, l := range lines[s:min(len(lines), s+1+rng.IntN(6))] {
				old = append(old, l.text)
			}
			if rng.IntN(2) == 0 {
				old[rng.IntN(len(old))] = pick()
			}
		} else {
			for range rng.IntN(6) {
				old = append(old, pick())
			}
		}
		pos := 0
		if len(lines) > 0 {
			pos = rng.IntN(len(lines))
		}
		want, wantC := locateSlow(h, old, lines, pos)
		s := newSearcher(context.Background(), lines, nil)
		got, _, err := s.locate(h, old, pos, 0)
		var gotC *Conflict
		if err != nil && !errors.As(err, &gotC) {
			t.Fatal(err)
		}
		if got != want || fmt.Sprint(gotC) != fmt.Sprint(wantC) {
			t.Fatalf("case %d: lines %q, anchors %q, old %q from %d: got %d %+v, want %d %+v", i, lines, h.Anchors, old, pos, got, gotC, want, wantC)
		}
	}
}

// TestPathologicalHunk: the red team's patch (issue 25) — a 30,000-line
// hunk against a 60,000-line file, matching everywhere but in its last
// line — answers its conflict instead of running for minutes.
func TestPathologicalHunk(t *testing.T) {
	content, f := pathological(60000, 30000)
	start := time.Now()
	_, err := f.Apply(context.Background(), content)
	var c *Conflict
	if !errors.As(err, &c) || c.Why != Differs || c.Line != 30000 || c.Expected != "\tnowhere()" {
		t.Fatalf("got %v (%+v)", err, c)
	}
	if d := time.Since(start); d > time.Minute { // a sanity bound; BenchmarkApplyPathological measures
		t.Errorf("took %s", d)
	}
}

// TestSearchIsBounded: a hunk whose every line is everywhere in the file,
// but never in its order, costs one step per candidate; the file's bound
// stops it with a sentence, well before the old search's square.
func TestSearchIsBounded(t *testing.T) {
	// The file: a, b, x, … ; each hunk "a", "b ": a loose match at once,
	// but the exact search would try every "a" first.
	var b strings.Builder
	for range 100000 {
		b.WriteString("a\nb \nb\nx\n")
	}
	content := b.String()
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: f\n")
	for range 60000 {
		p.WriteString("@@\n a\n-b\n+c\n")
	}
	p.WriteString("*** End Patch\n")
	pt, err := Parse(p.String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = pt.Files[0].Apply(context.Background(), []byte(content))
	var c *Conflict
	if !errors.As(err, &c) || c.Why != TooCostly || !strings.Contains(c.Describe("f"), "stopped searching") {
		t.Fatalf("got %v", err)
	}
}

// TestSearchStopsWhenCancelled: Apply watches its context. Cancelled
// while it searches, it returns soon (the old search ran on for minutes);
// cancelled before, it does no work.
func TestSearchStopsWhenCancelled(t *testing.T) {
	content, f := pathological(60000, 30000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Apply(ctx, content); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: %v", err)
	}

	// The deadline passes while it searches (or after it answered).
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.Apply(ctx, content)
		done <- err
	}()
	select {
	case err := <-done:
		var c *Conflict
		if !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &c) {
			t.Errorf("cancelled while searching: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the search went on after its context was cancelled")
	}
}
