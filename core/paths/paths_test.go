package paths

import (
	"path"
	"strings"
	"testing"

	"corral/core/errs"
)

var testLayout = Layout{
	Base:      "/srv/corral",
	SharedDir: "share",
	OutputDir: "output",
	Home:      "/home/me",
	Roots: []Root{
		{Path: "/home/me/Documents/inbox", Access: Read},
		{Path: "/home/me/Documents/inbox/rw", Access: ReadWrite},
		{Path: "/data/ab", Access: ReadWrite},
	},
}

// want describes the expected Target in a compact form; the zero value of a
// field is not checked, except that Area is always checked on success.
type want struct {
	area    Area
	dir     string
	rel     string
	visible string
	prefix  string
	access  Access
	host    string
	slash   bool
}

func TestResolve(t *testing.T) {
	const scope = "alice"
	scopeDir := "/srv/corral/alice"
	shareDir := "/srv/corral/share"

	type tc struct {
		in   string
		want want
		err  errs.Kind // non-empty: expect this error
	}
	groups := []struct {
		name  string
		cases []tc
	}{
		{"valid", []tc{
			{in: "notes/a.txt", want: want{area: InScope, dir: scopeDir, rel: "notes/a.txt", visible: "notes/a.txt", access: ReadWrite}},
			{in: "a.txt", want: want{area: InScope, dir: scopeDir, rel: "a.txt", visible: "a.txt"}},
			{in: ".", want: want{area: InScope, dir: scopeDir, rel: ".", visible: "."}},
			{in: "output/r.md", want: want{area: InScope, dir: scopeDir, rel: "output/r.md", visible: "output/r.md"}},
			{in: "share/x", want: want{area: InShare, dir: shareDir, rel: "x", visible: "share/x", prefix: "share", access: ReadWrite}},
			{in: "share", want: want{area: InShare, dir: shareDir, rel: ".", visible: "share", prefix: "share"}},
			{in: "/home/me/Documents/inbox/a.txt", want: want{area: InRoot, dir: "/home/me/Documents/inbox", rel: "a.txt", visible: "/home/me/Documents/inbox/a.txt", prefix: "/home/me/Documents/inbox", access: Read, host: "/home/me/Documents/inbox/a.txt"}},
			{in: "/home/me/Documents/inbox", want: want{area: InRoot, dir: "/home/me/Documents/inbox", rel: ".", visible: "/home/me/Documents/inbox", access: Read}},
			// The longest matching root wins.
			{in: "/home/me/Documents/inbox/rw/b", want: want{area: InRoot, dir: "/home/me/Documents/inbox/rw", rel: "b", access: ReadWrite}},
			{in: "~/x", want: want{area: Outside, dir: "/home/me", rel: "x", visible: "/home/me/x", prefix: "/home/me", host: "/home/me/x"}},
			{in: "~", want: want{area: Outside, dir: "/home", rel: "me", visible: "/home/me", host: "/home/me"}},
			{in: "~/Documents/inbox/q", want: want{area: InRoot, dir: "/home/me/Documents/inbox", rel: "q", access: Read}},
			{in: "/etc/passwd", want: want{area: Outside, dir: "/etc", rel: "passwd", visible: "/etc/passwd", prefix: "/etc", host: "/etc/passwd"}},
			{in: "/", want: want{area: Outside, dir: "/", rel: ".", visible: "/", host: "/"}},
		}},
		{"odd but fine", []tc{
			{in: "SHARE/x", want: want{area: InShare, dir: shareDir, rel: "x", visible: "share/x"}},
			{in: "Share", want: want{area: InShare, rel: ".", visible: "share"}},
			{in: "sHaRe/Docs/A.txt", want: want{area: InShare, rel: "Docs/A.txt", visible: "share/Docs/A.txt"}},
			{in: "./share/../x", want: want{area: InScope, rel: "x", visible: "x"}},
			{in: "share/..", want: want{area: InScope, rel: ".", visible: "."}},
			{in: "./", want: want{area: InScope, rel: ".", visible: "."}},
			{in: "a//b/./c", want: want{area: InScope, rel: "a/b/c", visible: "a/b/c"}},
			{in: "a/b/", want: want{area: InScope, rel: "a/b", visible: "a/b", slash: true}},
			{in: "share/", want: want{area: InShare, rel: ".", visible: "share", slash: true}},
			{in: "/etc/", want: want{area: Outside, rel: "etc", visible: "/etc", slash: true}},
			{in: "Output/r.md", want: want{area: InScope, rel: "Output/r.md"}}, // output is case-sensitive, just a folder
			{in: "shared/x", want: want{area: InScope, rel: "shared/x"}},
			{in: "sharex", want: want{area: InScope, rel: "sharex"}},
			{in: "~user/x", want: want{area: InScope, rel: "~user/x", visible: "~user/x"}},
			{in: "a~/b", want: want{area: InScope, rel: "a~/b"}},
			{in: "C:/x", want: want{area: InScope, rel: "C:/x"}},
			{in: "café", want: want{area: InScope, rel: "café"}},                                     // NFC
			{in: "cafe\u0301", want: want{area: InScope, rel: "cafe\u0301"}},                         // NFD: a different name, no normalisation
			{in: "\u017fhare/x", want: want{area: InScope, rel: "\u017fhare/x", visible: "ſhare/x"}}, // long s: NOT share
			{in: "\u0455hare/x", want: want{area: InScope, rel: "\u0455hare/x"}},                     // Cyrillic dze
			{in: "\uff53hare/x", want: want{area: InScope, rel: "\uff53hare/x"}},                     // fullwidth s
			{in: "SHAR\u212a/x", want: want{area: InScope}},                                          // Kelvin sign is not k
			{in: "...", want: want{area: InScope, rel: "..."}},
			{in: "..a/b", want: want{area: InScope, rel: "..a/b"}},
			{in: "/data/ab", want: want{area: InRoot, dir: "/data/ab", rel: "."}},
			{in: "/data/ab/../ab/c", want: want{area: InRoot, dir: "/data/ab", rel: "c"}},
			{in: strings.Repeat("a", 255), want: want{area: InScope}},
			{in: strings.Repeat("ab/", 1365) + "a", want: want{area: InScope}}, // 4096 bytes
		}},
		{"probing", []tc{
			{in: "", err: errs.InvalidPath},
			{in: "a\x00b", err: errs.InvalidPath},
			{in: "\x01", err: errs.InvalidPath},
			{in: "a\tb", err: errs.InvalidPath},
			{in: "a\nb", err: errs.InvalidPath},
			{in: "a\x7fb", err: errs.InvalidPath},
			{in: "a\u0085b", err: errs.InvalidPath}, // C1 NEL
			{in: "a\u009bb", err: errs.InvalidPath}, // C1 CSI
			{in: "a\\b", err: errs.InvalidPath},
			{in: "..\\etc", err: errs.InvalidPath},
			{in: "a\xffb", err: errs.InvalidPath},
			{in: "\xc0\xaf", err: errs.InvalidPath}, // overlong "/"
			{in: "\xed\xa0\x80", err: errs.InvalidPath},
			{in: strings.Repeat("a", 4097), err: errs.InvalidPath},
			{in: strings.Repeat("ab/", 1365) + "ab", err: errs.InvalidPath}, // 4097 bytes
			{in: strings.Repeat("a", 256), err: errs.InvalidPath},
			{in: "x/" + strings.Repeat("é", 128), err: errs.InvalidPath}, // 256 bytes in 128 runes
			{in: "txt.\u202eexe", err: errs.InvalidPath},                 // RLO
			{in: "a\u2066b", err: errs.InvalidPath},                      // LRI
			{in: "a\u200fb", err: errs.InvalidPath},                      // RLM
			{in: "sh\u200bare/x", err: errs.InvalidPath},                 // zero-width space
			{in: "a\u200db", err: errs.InvalidPath},                      // ZWJ
			{in: "\ufeffshare", err: errs.InvalidPath},                   // BOM
			{in: "a\u00adb", err: errs.InvalidPath},                      // soft hyphen
			{in: "a\u2028b", err: errs.InvalidPath},                      // line separator
			{in: "a\U000E0041b", err: errs.InvalidPath},                  // tag character
			{in: "./~/x", err: errs.InvalidPath},
			{in: "a/../~", err: errs.InvalidPath},
		}},
		{"escapes", []tc{
			{in: "..", err: errs.Denied},
			{in: "../x", err: errs.Denied},
			{in: "a/../../b", err: errs.Denied},
			{in: "output/../../etc/passwd", err: errs.Denied},
			{in: "share/../../x", err: errs.Denied},
			{in: "./../alice/x", err: errs.Denied},
			{in: "a/b/../../../alice", err: errs.Denied},
			// Absolute paths never become scope paths: they are host paths
			// that policy must approve.
			{in: "/srv/corral/bob/secret", want: want{area: Outside, host: "/srv/corral/bob/secret"}},
			{in: "/srv/corral/share/x", want: want{area: Outside}},
			{in: "/../../etc/passwd", want: want{area: Outside, host: "/etc/passwd"}},
			{in: "~/../../etc/shadow", want: want{area: Outside, host: "/etc/shadow"}},
			// A sibling with a common string prefix is not in the root.
			{in: "/data/abc/x", want: want{area: Outside, host: "/data/abc/x"}},
			{in: "/data/a", want: want{area: Outside}},
			{in: "/home/me/Documents/inboxes", want: want{area: Outside}},
			{in: "/home/me/Documents/inbox/../secret", want: want{area: Outside, host: "/home/me/Documents/secret"}},
		}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				got, err := testLayout.Resolve(scope, c.in)
				name := c.in
				if len(name) > 40 {
					name = name[:40] + "…"
				}
				if c.err != "" {
					if err == nil {
						t.Errorf("Resolve(%q) = %+v, want %s error", name, got, c.err)
						continue
					}
					if k := errs.KindOf(err); k != c.err {
						t.Errorf("Resolve(%q) error kind %s (%v), want %s", name, k, err, c.err)
					}
					if e := errs.As(err); !strings.HasSuffix(e.Msg, ".") || e.Msg[0] < 'A' || e.Msg[0] > 'Z' {
						t.Errorf("Resolve(%q) error %q is not a sentence", name, e.Msg)
					}
					continue
				}
				if err != nil {
					t.Errorf("Resolve(%q): unexpected error %v", name, err)
					continue
				}
				checkTarget(t, name, got, c.want)
				checkInvariants(t, &testLayout, scope, c.in, got)
			}
		})
	}
}

func checkTarget(t *testing.T, in string, got Target, w want) {
	t.Helper()
	if got.Area != w.area {
		t.Errorf("Resolve(%q).Area = %v, want %v (%+v)", in, got.Area, w.area, got)
	}
	check := func(field, g, w string) {
		if w != "" && g != w {
			t.Errorf("Resolve(%q).%s = %q, want %q", in, field, g, w)
		}
	}
	check("Dir", got.Dir, w.dir)
	check("Rel", got.Rel, w.rel)
	check("Visible", got.Visible, w.visible)
	check("Prefix", got.Prefix, w.prefix)
	check("Access", string(got.Access), string(w.access))
	check("Host", got.Host, w.host)
	if got.TrailingSlash != w.slash {
		t.Errorf("Resolve(%q).TrailingSlash = %v, want %v", in, got.TrailingSlash, w.slash)
	}
}

// checkInvariants asserts what every successful Resolve must satisfy.
func checkInvariants(t *testing.T, l *Layout, scope, in string, got Target) {
	t.Helper()
	if got.Rel == "" || path.IsAbs(got.Rel) || path.Clean(got.Rel) != got.Rel {
		t.Errorf("Resolve(%q).Rel = %q is not clean and relative", in, got.Rel)
	}
	for _, c := range strings.Split(got.Rel, "/") {
		if c == ".." {
			t.Errorf("Resolve(%q).Rel = %q has a .. component", in, got.Rel)
		}
	}
	switch got.Area {
	case InScope, InShare:
		if path.Dir(got.Dir) != l.Base || path.Base(got.Dir) == ".." {
			t.Errorf("Resolve(%q).Dir = %q is not directly under Base %q", in, got.Dir, l.Base)
		}
		if got.Host != "" {
			t.Errorf("Resolve(%q).Host = %q, want empty for %v", in, got.Host, got.Area)
		}
		if got.Access != ReadWrite {
			t.Errorf("Resolve(%q).Access = %q, want readwrite", in, got.Access)
		}
	case InRoot, Outside:
		if path.Join(got.Dir, got.Rel) != got.Host || got.Visible != got.Host {
			t.Errorf("Resolve(%q): Dir %q + Rel %q, Visible %q, Host %q disagree", in, got.Dir, got.Rel, got.Visible, got.Host)
		}
		if got.Area == Outside && got.Access != "" {
			t.Errorf("Resolve(%q).Access = %q, want empty for Outside", in, got.Access)
		}
	default:
		t.Errorf("Resolve(%q).Area = %d is unknown", in, got.Area)
	}
	if j := got.Join(got.Rel); j != got.Visible {
		t.Errorf("Resolve(%q): Join(Rel) = %q, want Visible %q", in, j, got.Visible)
	}
	if j := got.Join("."); (got.Prefix == "" && j != ".") || (got.Prefix != "" && j != got.Prefix) {
		t.Errorf("Resolve(%q): Join(\".\") = %q with prefix %q", in, j, got.Prefix)
	}
	again, err := l.Resolve(scope, got.Visible)
	if err != nil {
		t.Errorf("Resolve(%q).Visible = %q does not re-resolve: %v", in, got.Visible, err)
		return
	}
	again.TrailingSlash = got.TrailingSlash
	if again != got {
		t.Errorf("Resolve(%q) = %+v, but its Visible re-resolves to %+v", in, got, again)
	}
}

func TestResolveScopeAndLayout(t *testing.T) {
	for _, scope := range []string{"", "..", ".", "a/b", "share", "SHARE", "al ice", strings.Repeat("a", 65), "ſhare"} {
		if _, err := testLayout.Resolve(scope, "x"); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("Resolve with scope %q: err %v, want invalid_params", scope, err)
		}
	}
	for _, scope := range []string{"alice", "companion", "default", "A_b-9", strings.Repeat("a", 64)} {
		if _, err := testLayout.Resolve(scope, "x"); err != nil {
			t.Errorf("Resolve with scope %q: %v", scope, err)
		}
	}
	broken := []Layout{
		{Base: "", SharedDir: "share"},
		{Base: "relative", SharedDir: "share"},
		{Base: "/srv/x/", SharedDir: "share"},
		{Base: "/srv/x/../y", SharedDir: "share"},
		{Base: "/srv", SharedDir: ""},
		{Base: "/srv", SharedDir: "a/b"},
		{Base: "/srv", SharedDir: ".."},
		{Base: "/srv", SharedDir: "share", Home: "home"},
		{Base: "/srv", SharedDir: "share", Roots: []Root{{Path: "rel", Access: Read}}},
		{Base: "/srv", SharedDir: "share", Roots: []Root{{Path: "/x", Access: "write"}}},
	}
	for _, l := range broken {
		if _, err := l.Resolve("alice", "x"); err == nil {
			t.Errorf("Resolve with broken layout %+v succeeded", l)
		}
	}
	noHome := Layout{Base: "/srv", SharedDir: "share"}
	if _, err := noHome.Resolve("alice", "~/x"); errs.KindOf(err) != errs.InvalidPath {
		t.Errorf("~/x without Home: %v, want invalid_path", err)
	}
	rootAll := Layout{Base: "/srv", SharedDir: "share", Roots: []Root{{Path: "/", Access: Read}}}
	got, err := rootAll.Resolve("alice", "/etc/passwd")
	if err != nil || got.Area != InRoot || got.Dir != "/" || got.Rel != "etc/passwd" || got.Visible != "/etc/passwd" {
		t.Errorf("root / : %+v, %v", got, err)
	}
	got, err = rootAll.Resolve("alice", "/")
	if err != nil || got.Area != InRoot || got.Rel != "." || got.Join("x") != "/x" {
		t.Errorf("root / itself: %+v, %v", got, err)
	}
	custom := Layout{Base: "/srv", SharedDir: "Common"}
	got, err = custom.Resolve("bob", "COMMON/a")
	if err != nil || got.Area != InShare || got.Visible != "Common/a" || got.Dir != "/srv/Common" {
		t.Errorf("custom shared dir: %+v, %v", got, err)
	}
}

func TestJoinAndRelSlash(t *testing.T) {
	cases := []struct {
		t    Target
		rel  string
		want string
	}{
		{Target{Prefix: ""}, ".", "."},
		{Target{Prefix: ""}, "a/b", "a/b"},
		{Target{Prefix: "share"}, ".", "share"},
		{Target{Prefix: "share"}, "docs/a.txt", "share/docs/a.txt"},
		{Target{Prefix: "/home/me/Documents"}, "x", "/home/me/Documents/x"},
		{Target{Prefix: "/"}, "x", "/x"},
		{Target{Prefix: "/"}, ".", "/"},
	}
	for _, c := range cases {
		if got := c.t.Join(c.rel); got != c.want {
			t.Errorf("Target{Prefix:%q}.Join(%q) = %q, want %q", c.t.Prefix, c.rel, got, c.want)
		}
	}
	if s := (Target{Rel: "a", TrailingSlash: true}).RelSlash(); s != "a/" {
		t.Errorf("RelSlash = %q", s)
	}
	if s := (Target{Rel: ".", TrailingSlash: true}).RelSlash(); s != "." {
		t.Errorf("RelSlash of . = %q", s)
	}
}

func TestSafeSegment(t *testing.T) {
	for _, s := range []string{"a", "alice", "A-9_z", strings.Repeat("x", 64)} {
		if !SafeSegment(s) {
			t.Errorf("SafeSegment(%q) = false", s)
		}
	}
	for _, s := range []string{"", ".", "..", "a.b", "a/b", "a b", "é", strings.Repeat("x", 65), "a\x00"} {
		if SafeSegment(s) {
			t.Errorf("SafeSegment(%q) = true", s)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"notes/a.txt", "share/x", "SHARE/x", "ſhare/x", "./share/../x", "output/../../etc/passwd",
		"a/../../b", "~/x", "~", "~user/x", "/etc/passwd", "/data/abc", "/home/me/Documents/inbox/rw/", "a\x00b", "a\\b", ".", "/", "./~/x"} {
		f.Add("alice", s)
	}
	f.Fuzz(func(t *testing.T, scope, p string) {
		got, err := testLayout.Resolve(scope, p)
		if err != nil {
			if e := errs.As(err); e.Kind == errs.IO || e.Msg == "" {
				t.Fatalf("Resolve(%q, %q): error %v of kind %s", scope, p, err, e.Kind)
			}
			return
		}
		if !SafeSegment(scope) {
			t.Fatalf("Resolve accepted scope %q", scope)
		}
		if Check(p) != nil {
			t.Fatalf("Resolve accepted %q, which Check refuses", p)
		}
		checkInvariants(t, &testLayout, scope, p, got)
		if got.Area == InScope && got.Dir != path.Join(testLayout.Base, scope) {
			t.Fatalf("Resolve(%q, %q).Dir = %q, not the scope folder", scope, p, got.Dir)
		}
		if got.Area == InShare && got.Dir != path.Join(testLayout.Base, testLayout.SharedDir) {
			t.Fatalf("Resolve(%q, %q).Dir = %q, not the shared folder", scope, p, got.Dir)
		}
	})
}
