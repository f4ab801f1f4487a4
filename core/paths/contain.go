package paths

import (
	"path/filepath"
	"strings"
)

// The checks below are the one place Corral asks "is this path inside
// that folder": every package that compares paths component by component
// uses Within (core/sandbox, core/execbox's working directory, share
// link, cgroups and /etc entries, core/fsbox's move into itself,
// core/policy, core/undo's folder, core/links' folder links,
// app/config), so "/" and look-alike prefixes ("/a" and "/ab") are
// treated the same way everywhere. IsCleanAbs (paths.go) is the one
// check that a configured host path or a rule's target is absolute and
// clean. TestOneContainmentCheck finds a check written by hand in core.

// Within reports whether p is dir or lies inside it, component by
// component: "/a/b" is within "/a", "/ab" is not. Both are clean absolute
// paths (every absolute path is within "/"), or both clean relative ones
// ("a/b" is within "a"; a relative path climbs out when it is within "..").
func Within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

// Overlap reports whether a and b are the same folder or one lies inside
// the other.
func Overlap(a, b string) bool { return Within(a, b) || Within(b, a) }

// Resolved returns p, cleaned, with every symbolic link resolved; when that
// fails (p does not exist yet, or a link is broken) it returns p cleaned.
// It is for comparing configured folders by their real names, never for
// opening agent paths (those go through an os.Root).
func Resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// ASCIIEqualFold compares a and b ignoring the case of ASCII letters only,
// unlike strings.EqualFold, which also folds 'ſ' to 's' and the Kelvin sign
// to 'k' (a name that looks different must not match).
func ASCIIEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}
