package patch

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Result is what Apply made of one file.
type Result struct {
	Content []byte
	// Offsets holds, per hunk, how many lines below (+) or above (-) its
	// stated position a numbered hunk matched; 0 for unnumbered hunks.
	Offsets []int
}

// Moved reports whether any hunk matched away from its stated position.
func (r Result) Moved() bool {
	for _, o := range r.Offsets {
		if o != 0 {
			return true
		}
	}
	return false
}

// Conflict is a hunk that does not match the file.
type Conflict struct {
	Hunk     int    // 1-based
	Line     int    // 1-based line of the file where the text differs or the search started
	Expected string // the patch's line
	Found    string // the file's line
	Why      ConflictWhy
}

// ConflictWhy says which way a hunk failed.
type ConflictWhy int

// The ways a hunk fails.
const (
	Differs   ConflictWhy = iota // Line holds Found where Expected should be
	EndOfFile                    // the file ends at Line where Expected should be
	NotFound                     // Expected, the hunk's first line, is nowhere after Line
	NoAnchor                     // the @@ anchor Expected is nowhere after Line
	LeftOver                     // a deletion leaves Found at Line
	NotAtEnd                     // an "End of File" hunk does not match at the end
	TooCostly                    // the search for the hunk, after Line, passed its bound
)

func (c *Conflict) Error() string { return c.Describe("the file") }

// Describe says in a sentence what does not match in name.
func (c *Conflict) Describe(name string) string {
	switch c.Why {
	case EndOfFile:
		return fmt.Sprintf("Hunk %d of %s does not match: the file ends after line %d, where the patch expects %q.", c.Hunk, name, c.Line-1, c.Expected)
	case NotFound:
		return fmt.Sprintf("Hunk %d of %s does not match: its first line %q is not in the file after line %d.", c.Hunk, name, c.Expected, c.Line)
	case NoAnchor:
		return fmt.Sprintf("Hunk %d of %s does not match: its @@ line %q is not in the file after line %d.", c.Hunk, name, c.Expected, c.Line)
	case LeftOver:
		return fmt.Sprintf("The patch deletes %s, but its hunks do not remove every line: line %d, %q, would remain.", name, c.Line, c.Found)
	case TooCostly:
		return fmt.Sprintf("Hunk %d of %s could not be placed: its lines repeat so often in the file after line %d that Corral stopped searching. Give the hunk more distinctive context lines, or use a unified diff with line numbers.", c.Hunk, name, c.Line)
	case NotAtEnd:
		return fmt.Sprintf("Hunk %d of %s does not match at the end of the file, as its \"*** End of File\" line requires; line %d should be %q but is %q.", c.Hunk, name, c.Line, c.Expected, c.Found)
	}
	return fmt.Sprintf("Hunk %d of %s does not match: line %d should be %q but is %q.", c.Hunk, name, c.Line, c.Expected, c.Found)
}

// fline is one line of a file.
type fline struct {
	text string // without its line ending
	eol  string // "\n", "\r\n", or "" for a last line without one
}

// splitFile splits s into lines and reports whether most of them end in
// CRLF.
func splitFile(s string) ([]fline, bool) {
	n := strings.Count(s, "\n")
	out := make([]fline, 0, n+1)
	crlf := 0
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, fline{text: s})
			break
		}
		l := fline{text: s[:i], eol: "\n"}
		if i > 0 && s[i-1] == '\r' {
			l.text, l.eol = s[:i-1], "\r\n"
			crlf++
		}
		out = append(out, l)
		s = s[i+1:]
	}
	return out, crlf*2 > n
}

func looseEq(a, b string) bool {
	return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t")
}

// old returns the texts a hunk expects in the file.
func (h *Hunk) old() []string {
	var o []string
	for _, l := range h.Lines {
		if l.Op != '+' {
			o = append(o, l.Text)
		}
	}
	return o
}

// Apply applies f's hunks to content, the file's current bytes (empty for
// a file that does not exist yet), and returns the new content. For a
// Delete the new content is empty; a unified deletion (Strict) must
// remove every line. When ctx ends, the search stops and Apply returns
// ctx's error.
func (f *File) Apply(ctx context.Context, content []byte) (Result, error) {
	lines, crlf := splitFile(string(content))
	if len(lines) == 0 {
		crlf = f.CRLF
	}
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	res := Result{Offsets: make([]int, len(f.Hunks))}
	out := make([]fline, 0, len(lines)+8)
	pos, carry, firstKept := 0, 0, -1
	s := newSearcher(ctx, lines, f.Hunks)
	for i := range f.Hunks {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		h := &f.Hunks[i]
		old := h.old()
		start, off, err := s.locate(h, old, pos, carry)
		if err != nil {
			var c *Conflict
			if errors.As(err, &c) {
				c.Hunk = i + 1
			}
			return Result{}, err
		}
		if h.Numbered {
			res.Offsets[i], carry = off, off
		}
		if start > pos && firstKept < 0 {
			firstKept = pos
		}
		out = append(out, lines[pos:start]...)
		k := start
		for _, l := range h.Lines {
			switch l.Op {
			case ' ':
				fl := lines[k]
				if l.NoEOL {
					fl.eol = ""
				}
				if firstKept < 0 {
					firstKept = k
				}
				out = append(out, fl)
				k++
			case '-':
				k++
			case '+':
				e := eol
				if l.NoEOL {
					e = ""
				}
				out = append(out, fline{l.Text, e})
			}
		}
		pos = k
	}
	if pos < len(lines) && firstKept < 0 {
		firstKept = pos
	}
	out = append(out, lines[pos:]...)
	if f.Action == Delete {
		if f.Strict && firstKept >= 0 {
			return Result{}, &Conflict{Why: LeftOver, Line: firstKept + 1, Found: lines[firstKept].text}
		}
		return res, nil
	}
	size := 0
	for i := range out {
		if out[i].eol == "" && i < len(out)-1 {
			out[i].eol = eol // a line followed by another ends in a newline
		}
		size += len(out[i].text) + len(out[i].eol)
	}
	var b strings.Builder
	b.Grow(size)
	for _, l := range out {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	res.Content = []byte(b.String())
	return res, nil
}

// matchAt reports whether old matches lines at s.
func matchAt(old []string, lines []fline, s int, eq func(a, b string) bool) bool {
	if s < 0 || s+len(old) > len(lines) {
		return false
	}
	for j, o := range old {
		if t := lines[s+j].text; t != o && (eq == nil || !eq(t, o)) {
			return false
		}
	}
	return true
}

// prefix returns how many of old's lines match lines from s on (loosely).
func prefix(old []string, lines []fline, s int) int {
	n := 0
	for n < len(old) && s+n < len(lines) && looseEq(lines[s+n].text, old[n]) {
		n++
	}
	return n
}

// locate finds where hunk h, expecting old, applies in the file's lines
// at or after pos. It returns the index and, for a numbered hunk, its
// offset from the stated position; carry is the previous hunk's offset,
// tried first. A hunk that does not apply answers a *Conflict; a search
// cut short by the context, the context's error.
func (sr *searcher) locate(h *Hunk, old []string, pos, carry int) (int, int, error) {
	lines := sr.lines
	if h.Numbered {
		stated := h.OldStart - 1
		if len(old) == 0 {
			stated = h.OldStart // an insertion after line OldStart
		}
		stated = max(stated, 0)
		tries := []int{carry, 0}
		for d := 1; d <= MaxOffset; d++ {
			tries = append(tries, d, -d)
		}
		for _, eq := range []func(a, b string) bool{nil, looseEq} {
			for _, d := range tries {
				if s := stated + d; s >= pos && matchAt(old, lines, s, eq) {
					return s, d, nil
				}
			}
		}
		// The place where most of the hunk matches says best what differs.
		best, bestN := stated+carry, -1
		for _, d := range tries {
			s := stated + d
			if s < pos || s > len(lines) {
				continue
			}
			if n := prefix(old, lines, s); n > bestN {
				best, bestN = s, n
			}
		}
		if bestN < 0 {
			best, bestN = max(stated, pos), prefix(old, lines, max(stated, pos))
		}
		return 0, 0, differs(old, lines, best, bestN, Differs)
	}

	p := pos
	for _, a := range h.Anchors {
		j := sr.anchor(a, p)
		if j < 0 {
			return 0, 0, &Conflict{Why: NoAnchor, Line: p, Expected: a}
		}
		p = j + 1
	}
	if len(old) == 0 {
		if len(h.Anchors) > 0 {
			return p, 0, nil
		}
		return max(len(lines), p), 0, nil
	}
	if h.AtEOF {
		s := len(lines) - len(old)
		if s >= p && (matchAt(old, lines, s, nil) || matchAt(old, lines, s, looseEq)) {
			return s, 0, nil
		}
		s = max(s, p)
		c := differs(old, lines, s, prefix(old, lines, s), NotAtEnd)
		return 0, 0, c
	}
	// Exactly first, anywhere after p; then ignoring trailing blanks.
	for _, loose := range []bool{false, true} {
		s, err := sr.first(old, p, loose)
		if err == errTooCostly {
			return 0, 0, &Conflict{Why: TooCostly, Line: p, Expected: old[0]}
		}
		if err != nil || s >= 0 {
			return s, 0, err
		}
	}
	best, bestN, err := sr.longest(old, p)
	if err != nil {
		return 0, 0, err
	}
	if best < 0 {
		return 0, 0, &Conflict{Why: NotFound, Line: p, Expected: old[0]}
	}
	return 0, 0, differs(old, lines, best, bestN, Differs)
}

// differs describes old failing at s after n matching lines.
func differs(old []string, lines []fline, s, n int, why ConflictWhy) *Conflict {
	if n >= len(old) {
		n = len(old) - 1 // cannot happen for a failed match; be safe
	}
	n = max(n, 0)
	c := &Conflict{Why: why, Line: s + n + 1}
	if n < len(old) {
		c.Expected = old[n]
	}
	if s+n < len(lines) {
		c.Found = lines[s+n].text
	} else if why == Differs {
		c.Why = EndOfFile
	}
	return c
}
