package fsbox

import (
	"io/fs"
	"path"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		nomatch []string
	}{
		{"*.go", []string{"a.go", ".x.go"}, []string{"a/b.go", "a.goo", "go"}},
		{"**/*.go", []string{"a.go", "a/b.go", "a/b/c/d.go"}, []string{"a.txt", "a/b.txt", "a.go/x"}},
		{"**", []string{"a", "a/b", "a/b/c"}, nil},
		{"a/**", []string{"a", "a/b", "a/b/c"}, []string{"b", "ab/c"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a", "b", "a/x", "a/b/c"}},
		{"**/a/**/b/**", []string{"a/b", "x/a/y/b/z", "a/a/b/b"}, []string{"a", "b/a"}},
		{"a/*/c", []string{"a/b/c", "a/.b/c"}, []string{"a/c", "a/b/d/c"}},
		{"a**b", []string{"ab", "axxb"}, []string{"a/b", "ax/yb"}},
		{"?", []string{"a", "é"}, []string{"ab", "a/b"}},
		{"[a-c]x", []string{"ax", "cx"}, []string{"dx", "x"}},
		{"[^a]x", []string{"bx"}, []string{"ax"}},
		{`\*`, []string{"*"}, []string{"a"}},
		{"./a//b/", []string{"a/b"}, []string{"a"}},
		{"**/**/x", []string{"x", "a/x", "a/b/x"}, []string{"a"}},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", c.pattern, err)
			continue
		}
		for _, m := range c.match {
			if !g.match(m) {
				t.Errorf("%q does not match %q", c.pattern, m)
			}
		}
		for _, m := range c.nomatch {
			if g.match(m) {
				t.Errorf("%q matches %q", c.pattern, m)
			}
		}
	}
	for _, c := range []struct {
		pattern, dir string
		want         bool
	}{
		{"*.go", "a", false},
		{"a/*.go", "a", true},
		{"a/*.go", "b", false},
		{"a/*.go", "a/b", false},
		{"**/*.go", "a/b/c", true},
		{"a/**", "a/b/c", true},
		{"a/b", "a", true},
		{"a/b", "a/b", false},
	} {
		g, _ := compileGlob(c.pattern)
		if got := g.canDescend(c.dir); got != c.want {
			t.Errorf("%q canDescend(%q) = %v, want %v", c.pattern, c.dir, got, c.want)
		}
	}
	for _, bad := range []string{"", "/", "/a", "..", "a/../b", "a/./b", "[", "a/[b", `a\`, "./"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compileGlob(%q) accepted", bad)
		}
	}
}

// escapeGlob makes a pattern that matches name literally.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzGlob checks the matcher against its own promises: it never panics,
// a folder a match lies under can always be descended into (so pruning
// never hides a match), a pattern without "**" is exactly a component-wise
// path.Match, and an escaped name matches itself.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"**/*.go", "a/b/c.go"}, {"a/**/b", "a/x/y/b"}, {"*.txt", "a.txt"}, {"[a-", "a"},
		{`\*`, "*"}, {"**/**", "a"}, {"a/*/c", "a/b/c"}, {"./x", "x"}, {"?", "é"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !fs.ValidPath(name) || name == "." {
			return
		}
		if lit, err := compileGlob(escapeGlob(name)); err == nil && !lit.match(name) {
			t.Fatalf("escaped %q does not match itself", name)
		}
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		m := g.match(name)
		if m {
			parts := strings.Split(name, "/")
			for i := 1; i < len(parts); i++ {
				dir := path.Join(parts[:i]...)
				if !g.canDescend(dir) {
					t.Fatalf("%q matches %q but canDescend(%q) is false", pattern, name, dir)
				}
			}
		}
		hasStars := false
		for _, s := range g.segs {
			hasStars = hasStars || s == "**"
		}
		if !hasStars {
			parts := strings.Split(name, "/")
			want := len(parts) == len(g.segs)
			for i := 0; want && i < len(parts); i++ {
				ok, _ := path.Match(g.segs[i], parts[i])
				want = ok
			}
			if m != want {
				t.Fatalf("%q match %q = %v, path.Match component-wise says %v", pattern, name, m, want)
			}
		}
	})
}
