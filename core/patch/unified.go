package patch

import (
	"strconv"
	"strings"
)

const devNull = "/dev/null"

// section is a unified file section being read.
type section struct {
	line               int
	git                bool
	gitOld, gitNew     string // from the "diff --git" line, if it parsed
	oldName, newName   string // from "---" and "+++", raw
	headers            bool   // "---" and "+++" seen
	renameFrom, rename string
	newFile, deleted   bool
	hunks              []Hunk
	crlf               bool // the first added line ended in CRLF
}

func parseUnified(lines []pline) (*Patch, error) {
	p := &Patch{Format: Unified}
	var cur *section
	finish := func() error {
		if cur == nil {
			return nil
		}
		f, keep, err := cur.file()
		cur = nil
		if err != nil {
			return err
		}
		if keep {
			p.Files = append(p.Files, f)
		}
		return nil
	}
	isHeaderPair := func(i int) bool {
		return strings.HasPrefix(lines[i].text, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1].text, "+++ ")
	}
	afterHunk := false // the previous line closed a hunk by its counts
	for i := 0; i < len(lines); {
		l := lines[i].text
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &section{line: i + 1, git: true}
			cur.gitOld, cur.gitNew = splitGitLine(l[len("diff --git "):])
			i++
		case isHeaderPair(i):
			if cur == nil || !cur.git || cur.headers || len(cur.hunks) > 0 {
				if err := finish(); err != nil {
					return nil, err
				}
				cur = &section{line: i + 1}
			}
			var err error
			if cur.oldName, err = headerName(l[4:], i+1); err != nil {
				return nil, err
			}
			if cur.newName, err = headerName(lines[i+1].text[4:], i+2); err != nil {
				return nil, err
			}
			cur.headers = true
			i += 2
		case strings.HasPrefix(l, "@@"):
			if cur == nil || (!cur.headers && !cur.git) {
				return nil, syntaxErr(i+1, "this hunk comes before any --- and +++ lines naming its file.")
			}
			h, next, closed, err := readHunk(lines, i)
			if err != nil {
				return nil, err
			}
			if len(cur.hunks) == 0 {
				cur.crlf = h.crlf
			}
			cur.hunks = append(cur.hunks, h)
			i = next
			afterHunk = closed
			continue
		case cur != nil && cur.git && !cur.headers && len(cur.hunks) == 0 && gitHeader(cur, l):
			if strings.HasPrefix(l, "GIT binary patch") || (strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ")) {
				return nil, syntaxErr(i+1, "binary patches are not supported; write the file with file.write instead.")
			}
			if strings.HasPrefix(l, "copy from ") || strings.HasPrefix(l, "copy to ") {
				return nil, syntaxErr(i+1, "copies are not supported; add the new file with its whole content instead.")
			}
			i++
		default:
			if afterHunk && l != "" && l != "-- " && strings.ContainsRune(" +-", rune(l[0])) {
				return nil, syntaxErr(i+1, "this line follows a hunk that already has as many lines as its @@ header counts; correct the counts in the @@ line.")
			}
			if strings.HasPrefix(l, "GIT binary patch") {
				return nil, syntaxErr(i+1, "binary patches are not supported; write the file with file.write instead.")
			}
			i++
		}
		afterHunk = false
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// gitHeader reads one of git's extended header lines into s and reports
// whether l was one.
func gitHeader(s *section, l string) bool {
	switch {
	case strings.HasPrefix(l, "rename from "):
		s.renameFrom = unquote(l[len("rename from "):])
	case strings.HasPrefix(l, "rename to "):
		s.rename = unquote(l[len("rename to "):])
	case strings.HasPrefix(l, "new file mode "):
		s.newFile = true
	case strings.HasPrefix(l, "deleted file mode "):
		s.deleted = true
	case strings.HasPrefix(l, "old mode "), strings.HasPrefix(l, "new mode "),
		strings.HasPrefix(l, "index "), strings.HasPrefix(l, "similarity index "),
		strings.HasPrefix(l, "dissimilarity index "), strings.HasPrefix(l, "copy from "),
		strings.HasPrefix(l, "copy to "), strings.HasPrefix(l, "GIT binary patch"),
		strings.HasPrefix(l, "Binary files "):
	default:
		return false
	}
	return true
}

// file turns a finished section into a File; keep is false for a git
// section that changes nothing Corral applies (a mode change).
func (s *section) file() (File, bool, error) {
	f := File{Line: s.line, Hunks: s.hunks, CRLF: s.crlf}
	oldName, newName := s.oldName, s.newName
	if s.headers {
		oldName, newName = stripPrefixes(oldName, newName)
	} else if s.git {
		oldName, newName = stripPrefixes(s.gitOld, s.gitNew)
	}
	if s.renameFrom != "" || s.rename != "" {
		if s.renameFrom == "" || s.rename == "" {
			return f, false, syntaxErr(s.line, "a rename needs both a \"rename from\" and a \"rename to\" line.")
		}
		oldName, newName = s.renameFrom, s.rename
	}
	switch {
	case s.newFile || (s.headers && oldName == devNull):
		if newName == devNull || newName == "" {
			return f, false, syntaxErr(s.line, "a new file needs a name on its +++ line.")
		}
		f.Action, f.Path = Add, newName
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Op != '+' {
					return f, false, syntaxErr(h.Line, "a hunk of a new file may only add lines (each starting with +).")
				}
			}
		}
	case s.deleted || (s.headers && newName == devNull):
		if oldName == devNull || oldName == "" {
			return f, false, syntaxErr(s.line, "a deleted file needs a name on its --- line.")
		}
		f.Action, f.Path, f.Strict = Delete, oldName, true
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Op == '+' {
					return f, false, syntaxErr(h.Line, "a hunk of a deleted file may only remove lines (each starting with -).")
				}
			}
		}
	default:
		if oldName == "" || newName == "" {
			return f, false, syntaxErr(s.line, "the file section names no file; give --- a/path and +++ b/path lines.")
		}
		f.Action, f.Path = Update, oldName
		if newName != oldName {
			f.MoveTo = newName
		}
		if len(f.Hunks) == 0 && f.MoveTo == "" {
			if s.git {
				return f, false, nil // a mode change, or nothing at all
			}
			return f, false, syntaxErr(s.line, "the section for %s has no hunks (@@ lines).", oldName)
		}
	}
	return f, true, nil
}

// stripPrefixes strips git's a/ and b/ prefixes when both names carry
// them, or one does and the other is /dev/null.
func stripPrefixes(oldName, newName string) (string, string) {
	ha, hb := strings.HasPrefix(oldName, "a/"), strings.HasPrefix(newName, "b/")
	if (ha || oldName == devNull) && (hb || newName == devNull) {
		if ha {
			oldName = oldName[2:]
		}
		if hb {
			newName = newName[2:]
		}
	}
	return oldName, newName
}

// headerName reads the name of a "---" or "+++" line: a tab and what
// follows it (a time stamp) are dropped, a quoted name is unquoted.
func headerName(s string, line int) (string, error) {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", syntaxErr(line, "the quoted file name %s is not valid.", s)
		}
		return u, nil
	}
	s = strings.TrimRight(s, " ")
	if s == "" {
		return "", syntaxErr(line, "the line names no file.")
	}
	return s, nil
}

func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// splitGitLine reads the two names of a "diff --git" line: quoted, or
// "a/X b/X" with the same X twice, or split at " b/".
func splitGitLine(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		if q, err := strconv.QuotedPrefix(s); err == nil {
			a, _ := strconv.Unquote(q)
			return a, unquote(strings.TrimSpace(s[len(q):]))
		}
		return "", ""
	}
	if n := len(s); n%2 == 1 && s[n/2] == ' ' && strings.HasPrefix(s, "a/") && s[n/2+1:n/2+3] == "b/" && s[2:n/2] == s[n/2+3:] {
		return s[:n/2], s[n/2+1:]
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return s[:i], unquote(s[i+1:])
	}
	return "", ""
}

// readHunk reads the hunk whose "@@" header is lines[i]. It returns the
// index of the first line after the hunk and whether the hunk ended
// because its header's counts were reached.
func readHunk(lines []pline, i int) (h Hunk, next int, closed bool, err error) {
	h.Line = i + 1
	oldN, newN := -1, -1 // -1: no counts, read while lines look like a hunk's
	if start, on, nn, ok := parseHeader(lines[i].text); ok {
		h.OldStart, h.Numbered, oldN, newN = start, true, on, nn
	}
	i++
	counted := oldN >= 0
	for i < len(lines) {
		l := lines[i].text
		if counted && oldN <= 0 && newN <= 0 {
			if strings.HasPrefix(l, `\`) && len(h.Lines) > 0 {
				h.Lines[len(h.Lines)-1].NoEOL = true
				i++
			}
			return h, i, true, nil
		}
		if l == "" {
			// An empty line is a context line whose space an editor
			// dropped, when more of the hunk follows.
			if !moreHunk(lines, i+1) {
				break
			}
			l = " "
		}
		switch l[0] {
		case ' ', '-', '+':
			if l[0] == '-' && strings.HasPrefix(l, "--- ") && i+2 < len(lines) && strings.HasPrefix(lines[i+1].text, "+++ ") && strings.HasPrefix(lines[i+2].text, "@@") {
				return h, i, false, nil // the next file's headers
			}
			if l[0] == '+' && !h.sawAdd {
				h.sawAdd, h.crlf = true, lines[i].cr
			}
			h.Lines = append(h.Lines, Line{Op: l[0], Text: l[1:]})
			if l[0] != '+' {
				oldN--
			}
			if l[0] != '-' {
				newN--
			}
		case '\\':
			if len(h.Lines) == 0 {
				return h, i, false, syntaxErr(i+1, "a \"\\ No newline at end of file\" line must follow a hunk line.")
			}
			h.Lines[len(h.Lines)-1].NoEOL = true
		default:
			return h, i, false, nil
		}
		i++
	}
	if len(h.Lines) == 0 {
		return h, i, false, syntaxErr(h.Line, "the hunk has no lines.")
	}
	return h, i, counted && oldN <= 0 && newN <= 0, nil
}

// moreHunk reports whether lines[i] continues a hunk.
func moreHunk(lines []pline, i int) bool {
	for ; i < len(lines); i++ {
		l := lines[i].text
		if l == "" {
			continue
		}
		return (l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\') && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ")
	}
	return false
}

// parseHeader reads "@@ -l[,n] +l[,n] @@…".
func parseHeader(s string) (oldStart, oldN, newN int, ok bool) {
	rest, found := strings.CutPrefix(s, "@@ -")
	if !found {
		return 0, 0, 0, false
	}
	oldPart, rest, found := strings.Cut(rest, " +")
	if !found {
		return 0, 0, 0, false
	}
	newPart, _, found := strings.Cut(rest, " @@")
	if !found {
		return 0, 0, 0, false
	}
	oldStart, oldN, ok = rangeOf(oldPart)
	if !ok {
		return 0, 0, 0, false
	}
	_, newN, ok = rangeOf(newPart)
	return oldStart, oldN, newN, ok
}

func rangeOf(s string) (start, n int, ok bool) {
	a, b, comma := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start > 1<<30 {
		return 0, 0, false
	}
	n = 1
	if comma {
		if n, err = strconv.Atoi(b); err != nil || n < 0 || n > 1<<30 {
			return 0, 0, false
		}
	}
	return start, n, true
}
