package fsbox

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"corral/core/errs"
)

// MaxGrepTotalBytes bounds the bytes one Grep reads; past it the search
// stops with truncated set.
const MaxGrepTotalBytes = 256 << 20

// walkLimit is MaxWalkEntries, lowered by tests.
var walkLimit = MaxWalkEntries

// Info describes a file, folder or symlink.
type Info struct {
	Name     string
	Path     string // agent-visible
	Type     string // "file", "dir" or "symlink"
	Size     int64  // bytes of a file, of a symlink's target path; 0 for a folder
	Modified time.Time
}

// Match is a line Grep found.
type Match struct {
	Path string // agent-visible
	Line int    // 1-based
	Text string // the line without its ending, cut at MaxGrepText bytes
}

// info describes name of d from fi; ok is false for special files, which
// are not reported.
func (d Dir) info(name string, fi fs.FileInfo) (Info, bool) {
	v := d.Visible(name)
	in := Info{Name: path.Base(v), Path: v, Size: fi.Size(), Modified: fi.ModTime().UTC()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		in.Type = "symlink"
	case fi.IsDir():
		in.Type, in.Size = "dir", 0
	case fi.Mode().IsRegular():
		in.Type = "file"
	default:
		return Info{}, false
	}
	return in, true
}

// Stat describes rel of d without following a final symlink (a trailing
// "/" asks to follow it and requires a folder). Special files answer
// denied.
func (d Dir) Stat(rel string) (Info, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return Info{}, err
	}
	fi, err := d.Root.Lstat(name)
	if err != nil {
		return Info{}, d.fail(err, name)
	}
	if slash {
		if fi, err = d.Root.Stat(name + "/"); err != nil {
			return Info{}, d.fail(err, name)
		}
		if !fi.IsDir() {
			return Info{}, d.notDir(name)
		}
	}
	in, ok := d.info(name, fi)
	if !ok {
		return Info{}, d.special(name)
	}
	return in, nil
}

// List returns the entries below the folder rel of d, depth levels deep
// (1 to MaxListDepth; 0 means 1), at most max of them (0 means
// DefaultListMax, capped at MaxEntries) with truncated set when more
// remain. Entries come in tree order: each folder's entries sorted by name,
// a folder followed by its contents. Symlinks are reported, not followed;
// special files are left out.
func (d Dir) List(rel string, depth, max int) (entries []Info, truncated bool, err error) {
	name, _, err := d.name(rel)
	if err != nil {
		return nil, false, err
	}
	if depth == 0 {
		depth = 1
	}
	if depth < 1 || depth > MaxListDepth {
		return nil, false, errs.New(errs.InvalidParams, d.Visible(name), "The depth must be between 1 and %d.", MaxListDepth)
	}
	max, err = capCount(max, DefaultListMax, MaxEntries, d.Visible(name))
	if err != nil {
		return nil, false, err
	}
	entries = []Info{}
	more := false
	truncated, err = d.walk(name, depth, nil, func(name, _ string, fi fs.FileInfo) bool {
		in, ok := d.info(name, fi)
		if !ok {
			return false
		}
		if len(entries) == max {
			more = true
			return true
		}
		entries = append(entries, in)
		return false
	})
	return entries, truncated || more, err
}

// Find returns the agent-visible paths below the folder rel of d whose
// path relative to rel matches the glob pattern, in tree order, at most max
// (0 means DefaultFindMax, capped at MaxEntries), with truncated set when
// more remain or the walk stopped at MaxWalkEntries. Symlinks can match but
// are not followed; special files never match.
//
// In the pattern, a component "**" matches any number of components, zero
// included; within a component "*", "?", "[...]" (negated with "[^...]")
// and "\" escapes work as in [path.Match]. "*.txt" matches only at the top
// of rel; "**/*.txt" matches at any depth. Folders that cannot lead to a
// match are not entered.
func (d Dir) Find(rel, pattern string, max int) (matches []string, truncated bool, err error) {
	name, _, err := d.name(rel)
	if err != nil {
		return nil, false, err
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return nil, false, err
	}
	max, err = capCount(max, DefaultFindMax, MaxEntries, d.Visible(name))
	if err != nil {
		return nil, false, err
	}
	matches = []string{}
	more := false
	truncated, err = d.walk(name, math.MaxInt, g.canDescend, func(name, rel string, fi fs.FileInfo) bool {
		if _, ok := d.info(name, fi); !ok || !g.match(rel) {
			return false
		}
		if len(matches) == max {
			more = true
			return true
		}
		matches = append(matches, d.Visible(name))
		return false
	})
	return matches, truncated || more, err
}

// Grep returns the lines matching re in the file rel of d, or in the files
// below the folder rel whose relative path matches glob (when not empty; a
// glob without "/" matches file names at any depth).
// maxMatches 0 means DefaultMatches; it is capped at MaxMatches; truncated
// is set when more matches remain or the search stopped early. A walk
// skips symlinks, special files, hard-linked files, binary files and files
// over MaxGrepFileBytes; a single file named by rel answers the errors Read
// would instead (too_large past MaxGrepFileBytes).
func (d Dir) Grep(rel string, re *regexp.Regexp, glob string, maxMatches int) (matches []Match, truncated bool, err error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, false, err
	}
	v := d.Visible(name)
	if re == nil {
		return nil, false, errs.New(errs.InvalidParams, v, "The search pattern is missing.")
	}
	maxMatches, err = capCount(maxMatches, DefaultMatches, MaxMatches, v)
	if err != nil {
		return nil, false, err
	}
	var g *matcher
	if glob != "" {
		if g, err = compileGlob(glob); err != nil {
			return nil, false, err
		}
	}
	s := &grepper{d: d, re: re, max: maxMatches, matches: []Match{}, budget: MaxGrepTotalBytes}

	fi, err := d.Root.Stat(withSlash(name, slash))
	if err != nil {
		return nil, false, d.fail(err, name)
	}
	if !fi.IsDir() {
		f, fi, err := d.openRegular(name, slash)
		if err != nil {
			return nil, false, err
		}
		defer f.Close()
		if fi.Size() > MaxGrepFileBytes {
			return nil, false, errs.New(errs.TooLarge, v, "%s is %d bytes; Corral searches files up to %d bytes.", v, fi.Size(), MaxGrepFileBytes)
		}
		data, err := io.ReadAll(io.LimitReader(f, MaxGrepFileBytes))
		if err != nil {
			return nil, false, d.fail(err, name)
		}
		if sniffImage(data) != "" || isBinary(data[:min(len(data), sniffLen)], len(data) <= sniffLen) {
			return nil, false, errs.New(errs.Binary, v, "%s is a binary file, so it can't be searched as text.", v)
		}
		s.lines(v, data)
		return s.matches, s.more, nil
	}

	// A glob without a "/" names files in any folder, as grep tools do
	// ("*.go"); one with a "/" matches the path below rel ("./*.go": the
	// top level only).
	baseOnly := !strings.Contains(glob, "/")
	var descend func(string) bool
	if g != nil && !baseOnly {
		descend = g.canDescend
	}
	truncated, err = d.walk(name, math.MaxInt, descend, func(name, rel string, fi fs.FileInfo) bool {
		if !fi.Mode().IsRegular() || fi.Size() > MaxGrepFileBytes || nlink(fi) > 1 {
			return false
		}
		if g != nil {
			if baseOnly {
				rel = path.Base(rel)
			}
			if !g.match(rel) {
				return false
			}
		}
		return s.file(name)
	})
	return s.matches, truncated || s.more, err
}

type grepper struct {
	d       Dir
	re      *regexp.Regexp
	max     int
	matches []Match
	more    bool // a match past max was seen, or the byte budget ran out
	budget  int64
}

// file searches one file found by a walk; files that can't be opened
// safely or are binary are skipped. It reports whether to stop.
func (s *grepper) file(name string) bool {
	f, fi, err := s.d.openRegular(name, false)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi.Size() > MaxGrepFileBytes {
		return false
	}
	if fi.Size() > s.budget {
		s.more = true
		return true
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxGrepFileBytes+1))
	if err != nil || len(data) > MaxGrepFileBytes {
		return false
	}
	s.budget -= int64(len(data))
	if sniffImage(data) != "" || isBinary(data[:min(len(data), sniffLen)], len(data) <= sniffLen) {
		return false
	}
	return s.lines(s.d.Visible(name), data)
}

// lines records the matching lines of data; it reports whether to stop.
func (s *grepper) lines(v string, data []byte) bool {
	n := 0
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		n++
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !s.re.Match(line) {
			continue
		}
		if len(s.matches) == s.max {
			s.more = true
			return true
		}
		s.matches = append(s.matches, Match{Path: v, Line: n, Text: string(cutUTF8(line, MaxGrepText))})
	}
	return false
}

// capCount applies a default and a cap to a count parameter.
func capCount(n, def, most int, v string) (int, error) {
	switch {
	case n < 0:
		return 0, errs.New(errs.InvalidParams, v, "The maximum number of results must not be negative.")
	case n == 0:
		return def, nil
	case n > most:
		return most, nil
	}
	return n, nil
}

// visitFunc is called for each entry of a walk with its path in the Dir
// (name), its path relative to the folder walked (rel) and its Lstat
// information. It reports whether to stop the walk.
type visitFunc func(name, rel string, fi fs.FileInfo) (stop bool)

type fileID struct{ dev, ino uint64 }

type walker struct {
	d         Dir
	maxDepth  int
	descend   func(rel string) bool // nil: every folder
	visit     visitFunc
	budget    int
	seen      map[fileID]bool
	truncated bool
	stop      bool
}

// walk visits the entries below the folder start of d in tree order (each
// folder's entries sorted by name, a folder before its contents), down to
// maxDepth levels (1: start's own entries). Every folder is opened through
// the root with O_DIRECTORY|O_NONBLOCK; symlinks are never followed;
// Corral's temp files are skipped; a folder seen before (same device and
// inode) is not entered again. It stops after MaxWalkEntries entries with
// truncated set. Folders below start that cannot be opened are skipped.
func (d Dir) walk(start string, maxDepth int, descend func(string) bool, visit visitFunc) (truncated bool, err error) {
	f, err := d.openDir(start)
	if err != nil {
		return false, err
	}
	w := &walker{d: d, maxDepth: maxDepth, descend: descend, visit: visit, budget: walkLimit, seen: map[fileID]bool{}}
	w.dir(f, start, ".", 1)
	return w.truncated, nil
}

func (w *walker) dir(f *os.File, name, rel string, depth int) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.IsDir() {
		return
	}
	if id, ok := idOf(fi); ok {
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	var ents []fs.FileInfo
	for {
		// Readdir of a file opened in a root stats each entry relative to
		// the folder's descriptor, never through a host path.
		batch, err := f.Readdir(256)
		ents = append(ents, batch...)
		if len(ents) > w.budget {
			w.truncated = true
			break
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				w.truncated = true
			}
			break
		}
	}
	slices.SortFunc(ents, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		// Corral's own temporary files are listed like any other: an
		// agent cannot make one (refuseTempName), and the owner sees a
		// leftover of an interrupted write.
		if w.budget <= 0 {
			w.truncated, w.stop = true, true
			return
		}
		w.budget--
		cname, crel := path.Join(name, e.Name()), path.Join(rel, e.Name())
		if w.visit(cname, crel, e) {
			w.stop = true
			return
		}
		if e.IsDir() && depth < w.maxDepth && (w.descend == nil || w.descend(crel)) {
			sub, err := w.d.Root.OpenFile(cname, os.O_RDONLY|oDirectory|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
			if err != nil {
				continue
			}
			w.dir(sub, cname, crel, depth+1)
			if w.stop {
				return
			}
		}
	}
}
