package patch

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// Searching a file for a hunk with no line numbers (a Codex hunk) is
// near-linear: the file's lines are indexed once per Apply, by their text
// exactly and without trailing blanks. A hunk's candidate positions are
// the places of its rarest line; each is checked in constant time by a
// rolling hash of the lines' numbers (verified line by line on a hit).
// The candidates one file may cost are bounded (maxSteps); past the bound
// the hunk answers a Conflict (TooCostly) rather than run on. The context
// is checked as the search goes.

const (
	// minSteps and stepsPerLine bound a file's search: minSteps plus
	// stepsPerLine for each line of the file and of its hunks. A hunk
	// whose lines repeat all over the file costs one step per candidate.
	minSteps     = 1 << 20
	stepsPerLine = 32
	// checkEvery is how many steps pass between looks at the context.
	checkEvery = 1 << 12
)

// mersenne61 is the modulus of the rolling hash, 2^61-1.
const mersenne61 = 1<<61 - 1

func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	r := (hi<<3 | lo>>61) + lo&mersenne61
	if r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

func powmod(b uint64, e int) uint64 {
	r := uint64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulmod(r, b)
		}
		b = mulmod(b, b)
	}
	return r
}

// lineIndex numbers the distinct lines of a file under one comparison.
// It costs about 16 bytes per line, and the map of distinct lines.
type lineIndex struct {
	ids   map[string]int32
	seq   []int32  // per file line, its number
	pos   []int32  // the file's lines grouped by number, ascending in each group
	start []int32  // number id's lines are pos[start[id]:start[id+1]]
	pre   []uint64 // pre[i]: hash of seq[:i]
	base  uint64
}

func newLineIndex(lines []fline, key func(string) string) *lineIndex {
	ix := &lineIndex{ids: map[string]int32{}, seq: make([]int32, len(lines)),
		pre: make([]uint64, len(lines)+1), base: 1<<32 + rand.Uint64N(mersenne61-1<<33)}
	var count []int32
	for i, l := range lines {
		k := key(l.text)
		id, ok := ix.ids[k]
		if !ok {
			id = int32(len(count))
			ix.ids[k] = id
			count = append(count, 0)
		}
		count[id]++
		ix.seq[i] = id
		ix.pre[i+1] = (mulmod(ix.pre[i], ix.base) + uint64(id) + 1) % mersenne61
	}
	ix.start = make([]int32, len(count)+1)
	for id, c := range count {
		ix.start[id+1] = ix.start[id] + c
	}
	next := count[:0]
	next = append(next, ix.start[:len(count)]...)
	ix.pos = make([]int32, len(lines))
	for i, id := range ix.seq {
		ix.pos[next[id]] = int32(i)
		next[id]++
	}
	return ix
}

// at lists the file lines that have number id, ascending.
func (ix *lineIndex) at(id int32) []int32 { return ix.pos[ix.start[id]:ix.start[id+1]] }

// pattern returns the numbers of old's lines (-1 for a line the file does
// not have) and their hash.
func (ix *lineIndex) pattern(old []string, key func(string) string) ([]int32, uint64) {
	pat := make([]int32, len(old))
	var h uint64
	for j, o := range old {
		id, ok := ix.ids[key(o)]
		if !ok {
			id = -1
		}
		pat[j] = id
		h = (mulmod(h, ix.base) + uint64(id) + 1) % mersenne61
	}
	return pat, h
}

// window is the hash of seq[s:s+m]; pm is base^m.
func (ix *lineIndex) window(s, m int, pm uint64) uint64 {
	return (ix.pre[s+m] + mersenne61 - mulmod(ix.pre[s], pm)) % mersenne61
}

// next returns the first line at or after from that has number id, or -1.
func (ix *lineIndex) next(id int32, from int) int {
	l := ix.at(id)
	i, _ := slices.BinarySearch(l, int32(from))
	if i == len(l) {
		return -1
	}
	return int(l[i])
}

func exactKey(s string) string { return s }
func looseKey(s string) string { return strings.TrimRight(s, " \t") }

// searcher finds one file's unnumbered hunks. Its indexes are built on
// first use.
type searcher struct {
	ctx   context.Context
	lines []fline
	steps int // left to spend
	since int // steps since the context was last checked

	exact, loose *lineIndex
	trimmed      map[string][]int32 // anchors: lines by strings.TrimSpace
}

func newSearcher(ctx context.Context, lines []fline, hunks []Hunk) *searcher {
	n := len(lines)
	for i := range hunks {
		n += len(hunks[i].Lines)
	}
	return &searcher{ctx: ctx, lines: lines, steps: minSteps + stepsPerLine*n}
}

// spend charges n steps; it fails when the bound is passed or the context
// has ended.
func (s *searcher) spend(n int) error {
	s.steps -= n
	s.since += n
	if s.since >= checkEvery {
		s.since = 0
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if s.steps < 0 {
		return errTooCostly
	}
	return nil
}

// errTooCostly is the bound passed; locate answers a Conflict.
var errTooCostly = errors.New("patch: search bound passed")

func (s *searcher) index(loose bool) *lineIndex {
	if loose {
		if s.loose == nil {
			s.loose = newLineIndex(s.lines, looseKey)
		}
		return s.loose
	}
	if s.exact == nil {
		s.exact = newLineIndex(s.lines, exactKey)
	}
	return s.exact
}

// anchor returns the first line at or after from that is a, exactly or
// else ignoring surrounding blanks, or -1.
func (s *searcher) anchor(a string, from int) int {
	ix := s.index(false)
	if id, ok := ix.ids[a]; ok {
		if j := ix.next(id, from); j >= 0 {
			return j
		}
	}
	if s.trimmed == nil {
		s.trimmed = map[string][]int32{}
		for i, l := range s.lines {
			k := strings.TrimSpace(l.text)
			s.trimmed[k] = append(s.trimmed[k], int32(i))
		}
	}
	l := s.trimmed[strings.TrimSpace(a)]
	i, _ := slices.BinarySearch(l, int32(from))
	if i == len(l) {
		return -1
	}
	return int(l[i])
}

// first returns the first position at or after from where old matches
// (exactly, or with loose, ignoring trailing blanks), or -1.
func (s *searcher) first(old []string, from int, loose bool) (int, error) {
	m := len(old)
	if from+m > len(s.lines) {
		return -1, nil
	}
	key := exactKey
	if loose {
		key = looseKey
	}
	ix := s.index(loose)
	pat, h := ix.pattern(old, key)
	if err := s.spend(m); err != nil {
		return -1, err
	}
	// The rarest of the hunk's lines in the rest of the file: every match
	// has it at its place.
	rare, count, at := -1, -1, 0
	for k, id := range pat {
		if id < 0 {
			return -1, nil // a line the file does not have
		}
		l := ix.at(id)
		i, _ := slices.BinarySearch(l, int32(from+k))
		if c := len(l) - i; rare < 0 || c < count {
			rare, count, at = k, c, i
		}
		if count == 0 {
			return -1, nil
		}
	}
	pm := powmod(ix.base, m)
	for _, q := range ix.at(pat[rare])[at:] {
		st := int(q) - rare
		if st+m > len(s.lines) {
			break
		}
		if err := s.spend(1); err != nil {
			return -1, err
		}
		if ix.window(st, m, pm) == h && slices.Equal(ix.seq[st:st+m], pat) {
			return st, nil
		}
	}
	return -1, nil
}

// longest returns where, at or after from, the longest start of old
// matches loosely (the first such place) and how many lines match: what
// Conflict reports when a hunk matches nowhere. Knuth-Morris-Pratt over
// the lines' numbers: linear.
func (s *searcher) longest(old []string, from int) (int, int, error) {
	ix := s.index(true)
	pat, _ := ix.pattern(old, looseKey)
	if i := slices.Index(pat, -1); i >= 0 {
		pat = pat[:i] // no match goes past a line the file does not have
	}
	if len(pat) == 0 {
		return -1, 0, nil
	}
	// fail[q] is the longest proper border of pat[:q].
	fail := make([]int, len(pat)+1)
	fail[0] = -1
	for i, k := 0, -1; i < len(pat); i++ {
		for k >= 0 && pat[k] != pat[i] {
			k = fail[k]
		}
		k++
		fail[i+1] = k
	}
	best, bestN := -1, 0
	q := 0
	for i := from; i < len(ix.seq); i++ {
		if (i-from)%checkEvery == 0 {
			if err := s.ctx.Err(); err != nil {
				return 0, 0, err
			}
		}
		for q >= 0 && (q == len(pat) || pat[q] != ix.seq[i]) {
			q = fail[q]
		}
		q++
		if q > bestN {
			best, bestN = i-q+1, q
		}
	}
	return best, bestN, nil
}
