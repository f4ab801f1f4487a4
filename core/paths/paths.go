// Package paths turns a path an agent sent into the place Corral will look:
// a host folder to open an [os.Root] at, a clean relative path inside it and
// the canonical agent-visible spelling of the path for results, audit
// entries and approval prompts.
//
// It is pure string work: nothing here touches the disk.
//
// Guarantees:
//
//   - [Check] (and therefore [Layout.Resolve]) rejects, before any disk
//     access, empty paths, paths over 4096 bytes, components over 255 bytes,
//     invalid UTF-8, backslashes, control characters (C0, DEL, C1) and
//     invisible formatting characters (Unicode category Cf, which holds the
//     bidi overrides and isolates U+202A–U+202E and U+2066–U+2069, the marks
//     U+200E/U+200F/U+061C, the zero-width space, joiners and U+2060, the
//     byte order mark, the soft hyphen and tag characters) as well as the
//     line and paragraph separators U+2028/U+2029. Such characters could
//     make a path read differently in the audit log or an approval dialog
//     from what is opened.
//   - A relative path is cleaned lexically and never climbs above the scope
//     folder: "..", "../x" and "a/../../b" answer denied.
//   - The shared-folder prefix is compared in ASCII only, ignoring case
//     ("SHARE/x" is the shared folder); Unicode look-alikes such as "ſhare"
//     (long s), fullwidth or Cyrillic letters are ordinary names inside the
//     scope. The output prefix is an ordinary, case-sensitive folder of the
//     scope.
//   - Roots contain paths component-wise: root /a/b contains /a/b and
//     /a/b/c, never /a/bc; the longest matching root wins.
//   - Every successful [Target] has a Rel that is clean, relative and free of
//     ".." components, and its Visible re-resolves to the same Target.
//
// Not guaranteed — these need the disk and are the job of package fsbox and
// of os.Root:
//
//   - Symlinks, hard links, mount points and special files are not looked
//     at. "notes/link/x" is a fine Target even when link points outside.
//   - Unicode is not normalised: "café" in NFC and in NFD are different
//     names, as they are to the Linux kernel. Both stay inside the scope.
//   - An absolute path inside Base itself (another scope, the shared folder)
//     is reported as Outside like any other host path; it is for policy to
//     refuse or ask.
//   - A relative path whose first component is exactly "~" after cleaning
//     ("./~/x") is refused as invalid_path, since its canonical spelling
//     would read as the owner's home folder.
package paths

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"corral/core/errs"
)

// Limits checked by [Check].
const (
	MaxPathBytes      = 4096
	MaxComponentBytes = 255
)

// Access is what a root allows.
type Access string

// The accesses of docs/protocol.md section 2.
const (
	Read      Access = "read"
	ReadWrite Access = "readwrite"
)

// Root is an extra host folder agents may use without asking.
type Root struct {
	Path   string // absolute, cleaned host path
	Access Access
}

// Layout describes the sandbox: where scope folders and the shared folder
// live and which extra roots exist.
type Layout struct {
	Base      string // absolute host path of the sandbox base
	SharedDir string // configured shared folder name, e.g. "share"
	OutputDir string // e.g. "output"; informational, output/… is an ordinary scope path
	Home      string // the owner's home, for "~/" expansion
	Roots     []Root
}

// Area says which kind of folder a Target lies in.
type Area int

// The areas a path can resolve to.
const (
	InScope Area = iota // the request's own scope folder, Base/<scope>
	InShare             // the shared folder, Base/<SharedDir>
	InRoot              // a configured root
	Outside             // any other host path; needs the owner's approval
)

func (a Area) String() string {
	switch a {
	case InScope:
		return "scope"
	case InShare:
		return "share"
	case InRoot:
		return "root"
	case Outside:
		return "outside"
	}
	return "unknown"
}

// Target is a resolved path.
type Target struct {
	Area Area
	// Dir is the host folder an os.Root is opened at: Base/<scope>,
	// Base/<SharedDir>, the root's Path, or for Outside path.Dir(Host).
	Dir string
	// Rel is the slash path inside Dir, "." for Dir itself; never absolute,
	// never containing "..".
	Rel string
	// Visible is the canonical agent-visible path: "notes/a.txt",
	// "share/docs/a.txt", "/home/me/Documents/x"; the scope root is ".".
	Visible string
	// Prefix is the agent-visible path of Dir: "" for a scope, SharedDir for
	// the shared folder, the root's host path for a root, path.Dir(Host) for
	// Outside.
	Prefix string
	// Access is ReadWrite for scope and share, the root's access for InRoot
	// and "" for Outside.
	Access Access
	// Host is, for InRoot and Outside, the absolute cleaned host path (used
	// for approvals); "" otherwise.
	Host string
	// TrailingSlash reports that the agent wrote a trailing "/": the path
	// must name a folder (a file then answers not_directory).
	TrailingSlash bool
}

// RelSlash is Rel with a "/" appended when the agent wrote a trailing slash.
// Package fsbox treats a rel ending in "/" as "must be a folder", so callers
// pass RelSlash to keep the agent's intent.
func (t Target) RelSlash() string {
	if t.TrailingSlash && t.Rel != "." {
		return t.Rel + "/"
	}
	return t.Rel
}

// Join returns the agent-visible path of a slash path below Dir. Join(".")
// is the agent-visible path of Dir itself (t.Prefix, or "." for a scope).
func (t Target) Join(rel string) string {
	return joinVisible(t.Prefix, rel)
}

func joinVisible(prefix, rel string) string {
	if prefix == "" {
		if rel == "" {
			return "."
		}
		return path.Clean(rel)
	}
	if rel == "" || rel == "." {
		return prefix
	}
	return path.Join(prefix, rel)
}

// SafeSegment reports whether s matches [A-Za-z0-9_-]{1,64}, the form of
// scope and user ids.
func SafeSegment(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Check rejects what must never reach the disk. The error is an
// errs.InvalidPath with a sentence saying what is wrong; it does not repeat
// the path, which may hold the very characters that were refused.
func Check(p string) error {
	if p == "" {
		return invalid("The path is empty; name a file or folder.")
	}
	if len(p) > MaxPathBytes {
		return invalid("The path is longer than %d bytes.", MaxPathBytes)
	}
	if !utf8.ValidString(p) {
		return invalid("The path is not valid UTF-8 text.")
	}
	comp := 0
	for _, r := range p {
		switch {
		case r == '/':
			comp = 0
			continue
		case r == '\\':
			return invalid("The path contains a backslash; use / between folders.")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return invalid("The path contains a control character, which file names here may not hold.")
		case unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			return invalid("The path contains an invisible formatting character (U+%04X), which could make it read differently from what it is.", r)
		}
		comp += utf8.RuneLen(r)
		if comp > MaxComponentBytes {
			return invalid("A part of the path between slashes is longer than %d bytes.", MaxComponentBytes)
		}
	}
	return nil
}

func invalid(format string, args ...any) error {
	return errs.New(errs.InvalidPath, "", format, args...)
}

// Validate reports whether the layout is usable: Base and Home absolute and
// clean, SharedDir a single safe name, roots absolute with a known access.
// Resolve calls it and fails closed on a broken layout.
func (l *Layout) Validate() error {
	bad := func(format string, args ...any) error {
		return errs.New(errs.IO, "", format, args...)
	}
	if !IsCleanAbs(l.Base) {
		return bad("The sandbox folder is not configured as an absolute path.")
	}
	if !SafeSegment(l.SharedDir) {
		return bad("The shared folder name is not a simple name.")
	}
	if l.Home != "" && !IsCleanAbs(l.Home) {
		return bad("The home folder is not configured as an absolute path.")
	}
	for _, r := range l.Roots {
		if !IsCleanAbs(r.Path) {
			return bad("An extra root is not configured as an absolute path.")
		}
		if r.Access != Read && r.Access != ReadWrite {
			return bad("An extra root has an unknown access %q.", r.Access)
		}
	}
	return nil
}

// IsCleanAbs reports whether p is an absolute, clean path without NUL
// (which no host path holds): the one check of a configured host path,
// here and in core/execbox.
func IsCleanAbs(p string) bool {
	return p != "" && path.IsAbs(p) && path.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// Resolve turns the agent path p of a request in scope into a Target. It
// answers errs.InvalidPath for what [Check] refuses, errs.Denied for a
// relative path that climbs above the scope folder, and errs.InvalidParams
// for a scope that is not a safe segment or names the shared folder.
func (l *Layout) Resolve(scope, p string) (Target, error) {
	if err := l.Validate(); err != nil {
		return Target{}, err
	}
	if !SafeSegment(scope) {
		return Target{}, errs.New(errs.InvalidParams, "", "The folder name is not a simple name.")
	}
	if ASCIIEqualFold(scope, l.SharedDir) {
		return Target{}, errs.New(errs.InvalidParams, "", "The folder name is the shared folder's name.")
	}
	if err := Check(p); err != nil {
		return Target{}, err
	}
	trailing := len(p) > 1 && strings.HasSuffix(p, "/")

	if p == "~" || strings.HasPrefix(p, "~/") {
		if l.Home == "" {
			return Target{}, invalid("The home folder (~) is not known here; write the full path.")
		}
		p = l.Home + p[1:]
	}
	if path.IsAbs(p) {
		t := l.host(path.Clean(p))
		t.TrailingSlash = trailing && t.Host != "/"
		return t, nil
	}

	clean := path.Clean(p)
	if Within(clean, "..") {
		return Target{}, errs.New(errs.Denied, p, "That path leads outside your folder.")
	}
	first, rest, _ := strings.Cut(clean, "/")
	if first == "~" {
		return Target{}, invalid("A folder named ~ would be read as your home folder; rename it or write ~/… for home.")
	}
	if ASCIIEqualFold(first, l.SharedDir) {
		rel := rest
		if rel == "" {
			rel = "."
		}
		return Target{
			Area:          InShare,
			Dir:           path.Join(l.Base, l.SharedDir),
			Rel:           rel,
			Visible:       joinVisible(l.SharedDir, rel),
			Prefix:        l.SharedDir,
			Access:        ReadWrite,
			TrailingSlash: trailing,
		}, nil
	}
	return Target{
		Area:          InScope,
		Dir:           path.Join(l.Base, scope),
		Rel:           clean,
		Visible:       clean,
		Prefix:        "",
		Access:        ReadWrite,
		TrailingSlash: trailing && clean != ".",
	}, nil
}

// host resolves an absolute, cleaned host path.
func (l *Layout) host(h string) Target {
	best := -1
	for i, r := range l.Roots {
		if Within(h, r.Path) && (best < 0 || len(r.Path) > len(l.Roots[best].Path)) {
			best = i
		}
	}
	if best >= 0 {
		r := l.Roots[best]
		rel := "."
		if h != r.Path {
			rel = strings.TrimPrefix(strings.TrimPrefix(h, r.Path), "/")
		}
		return Target{Area: InRoot, Dir: r.Path, Rel: rel, Visible: h, Prefix: r.Path, Access: r.Access, Host: h}
	}
	if h == "/" {
		return Target{Area: Outside, Dir: "/", Rel: ".", Visible: "/", Prefix: "/", Host: "/"}
	}
	dir := path.Dir(h)
	return Target{Area: Outside, Dir: dir, Rel: path.Base(h), Visible: h, Prefix: dir, Host: h}
}
