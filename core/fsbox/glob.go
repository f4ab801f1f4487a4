package fsbox

import (
	"path"
	"strings"

	"corral/core/errs"
)

// matcher is a compiled pattern for Find and Grep, matched against a slash
// path relative to the folder searched. A component "**" matches any
// number of components, zero included ("**/*.go" matches "a.go" and
// "x/y/a.go"; "docs/**" matches "docs" and everything below it). Inside a
// component, "*", "?", "[...]" and "\" escapes work as in [path.Match]; "*"
// never crosses a "/" and matches names starting with a dot like any other.
// A "**" inside a component ("a**b") is just two "*".
type matcher struct {
	segs []string
}

// compileGlob checks pattern. A leading "./" and empty components are
// dropped; an absolute pattern, a ".." or "." component, or a malformed
// component answers invalid_params.
func compileGlob(pattern string) (*matcher, error) {
	p := pattern
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	bad := func(format string, args ...any) error {
		return errs.New(errs.InvalidParams, "", format, args...)
	}
	if strings.HasPrefix(p, "/") {
		return nil, bad("The pattern must be relative to the folder searched, not start with /.")
	}
	var segs []string
	for s := range strings.SplitSeq(p, "/") {
		switch {
		case s == "":
			continue
		case s == "." || s == "..":
			return nil, bad("The pattern may not contain . or .. as a folder name.")
		case s == "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
		default:
			if _, err := path.Match(s, ""); err != nil {
				return nil, bad("The pattern %q is not a valid glob (check its [ ] brackets and \\ escapes).", pattern)
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, bad("The pattern is empty; give a glob such as **/*.txt.")
	}
	return &matcher{segs: segs}, nil
}

// run feeds the components of rel through the pattern and returns the set
// of pattern positions reached: states[i] means segs[:i] matched all of
// rel. It is an NFA walk, linear in len(rel) × len(segs).
func (g *matcher) run(rel string) []bool {
	n := len(g.segs)
	cur := make([]bool, n+1)
	cur[0] = true
	g.closure(cur)
	if rel == "." || rel == "" {
		return cur
	}
	next := make([]bool, n+1)
	for c := range strings.SplitSeq(rel, "/") {
		clear(next)
		alive := false
		for i := range n {
			if !cur[i] {
				continue
			}
			if g.segs[i] == "**" {
				next[i] = true
				alive = true
			} else if ok, _ := path.Match(g.segs[i], c); ok {
				next[i+1] = true
				alive = true
			}
		}
		if !alive {
			clear(cur)
			return cur
		}
		g.closure(next)
		cur, next = next, cur
	}
	return cur
}

// closure lets each "**" match zero components.
func (g *matcher) closure(s []bool) {
	for i, seg := range g.segs {
		if s[i] && seg == "**" {
			s[i+1] = true
		}
	}
}

// match reports whether rel, a slash path relative to the folder searched,
// matches the pattern.
func (g *matcher) match(rel string) bool {
	return g.run(rel)[len(g.segs)]
}

// canDescend reports whether something below the folder rel could match,
// so walks skip folders that cannot.
func (g *matcher) canDescend(rel string) bool {
	s := g.run(rel)
	for _, on := range s[:len(g.segs)] {
		if on {
			return true
		}
	}
	return false
}
