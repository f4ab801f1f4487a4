// Package patch reads multi-file patches and applies them to text in
// memory. It does no I/O: the caller reads each file, hands its content to
// [File.Apply] and decides what to write.
//
// Two formats are read, told apart by the first non-blank line:
//
//   - The unified diff format of diff -u and git diff: "--- a/x" and
//     "+++ b/x" headers, "@@ -l,n +l,n @@" hunks, /dev/null for creation
//     and deletion, git's "diff --git", "rename from"/"rename to",
//     "new file mode", "deleted file mode" and "\ No newline at end of
//     file". The a/ and b/ prefixes are stripped as patch -p1 does when
//     both names carry them (or the other side is /dev/null); names
//     without them are taken as written. A "--- x" / "+++ y" pair with
//     different names and no git headers is a rename of x to y. A hunk
//     header without line numbers ("@@" or "@@ @@") is located like a
//     Codex hunk. Text before, between and after file sections is
//     ignored, as patch ignores a mail's prose.
//   - The Codex format coding agents emit: "*** Begin Patch", "*** Add
//     File: p" (every line "+text"), "*** Delete File: p", "*** Update
//     File: p" with an optional "*** Move to: q", hunks introduced by "@@"
//     or "@@ anchor" (an anchor is a line that must be found first, such
//     as a function's signature; several anchors are searched in turn),
//     lines starting with " ", "-" or "+", "*** End of File" (the hunk
//     must match at the end of the file) and "*** End Patch", which must
//     be there: a patch cut off mid-way is refused, not half applied.
//
// Guarantees:
//
//   - [Parse] and [File.Apply] never panic and do work bounded by the
//     size of their input: Parse is linear in the patch. Apply places a
//     numbered hunk by trying at most 2×MaxOffset+2 positions; it finds a
//     hunk without numbers through an index of the file's lines (the
//     hunk's rarest line gives the candidates, a rolling hash checks each
//     in constant time) and spends at most a fixed amount plus a constant
//     per line of the file and its hunks: past that the hunk answers a
//     [*Conflict] (TooCostly) instead of searching on. Apply stops when
//     its context ends and returns the context's error.
//   - Apply either returns the whole new content or an error; a hunk
//     that does not match answers a [*Conflict] naming the hunk, the file
//     line where the text first differs, the expected and the found text.
//   - A numbered hunk (unified) matches exactly where its header says or
//     up to [MaxOffset] lines above or below; the offset used is reported.
//     Matching compares line text without its line ending: first exactly,
//     then ignoring trailing spaces and tabs. Unchanged lines keep the
//     file's own text and line endings.
//   - Line endings: added lines take the file's dominant ending (CRLF when
//     most lines end in CRLF, else LF); a new file takes the patch's.
//     "\ No newline at end of file" is honoured for the new side; a line
//     that ends up followed by another always gets a line ending.
//
// Not guaranteed:
//
//   - Paths are only parsed, not checked: the caller resolves and fences
//     them. Two sections naming the same file are the caller's to refuse.
//   - Binary patches, copies ("copy from") and mode changes are not
//     supported: the first two answer a [*SyntaxError], mode-only changes
//     are ignored.
//   - Hunks are matched by content only; GNU patch's "fuzz" (ignoring
//     context lines) is not done, and line-count mismatches in an "@@"
//     header are tolerated only when the hunk ends early, never when more
//     lines follow than the header counts.
//   - A Codex hunk is searched forward from the end of the previous hunk
//     and the first match wins, as in Codex's own tool; a context that
//     occurs twice may match the wrong place.
package patch

import (
	"fmt"
	"strings"
)

// MaxOffset is how many lines away from its stated position a numbered
// hunk may match.
const MaxOffset = 3

// Format names a patch format.
type Format string

// The formats Parse reads.
const (
	Unified Format = "unified"
	Codex   Format = "codex"
)

// Action is what a file section does.
type Action string

// The actions of a file section.
const (
	Add    Action = "add"
	Delete Action = "delete"
	Update Action = "update" // modify, rename, or both
)

// Patch is a parsed patch.
type Patch struct {
	Format Format
	Files  []File
}

// File is one file's section of a patch.
type File struct {
	Action Action
	// Path is the file before the patch (Update, Delete) or the new file
	// (Add), as written in the patch with any a/ or b/ prefix stripped.
	Path string
	// MoveTo is, for Update, the path the file is renamed to; "" if none.
	MoveTo string
	Hunks  []Hunk
	// Line is the patch line (1-based) where the section starts.
	Line int
	// Strict means, for a unified deletion, that the hunks must remove
	// every line of the file.
	Strict bool
	// CRLF means a new file's lines end in CRLF (the patch's did).
	CRLF bool
}

// Hunk is one change inside a file.
type Hunk struct {
	// OldStart is the 1-based first line of the hunk in the old file, from
	// a unified "@@" header; 0 when Numbered is false.
	OldStart int
	Numbered bool
	// Anchors are lines to find, in turn, before the hunk (Codex "@@ x").
	Anchors []string
	Lines   []Line
	// AtEOF means the hunk must match at the end of the file.
	AtEOF bool
	// Line is the patch line (1-based) of the hunk's header or first line.
	Line int

	sawAdd, crlf bool // crlf: the first added line ended in CRLF
	blank        int  // Codex: trailing context lines that were empty lines
}

// Line is one line of a hunk.
type Line struct {
	Op   byte   // ' ' (context), '-' (removed) or '+' (added)
	Text string // without the op and without a line ending
	// NoEOL marks the line "\ No newline at end of file".
	NoEOL bool
}

// SyntaxError is a patch that cannot be read.
type SyntaxError struct {
	Line int // 1-based line of the patch; 0 for the patch as a whole
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("Line %d of the patch: %s", e.Line, e.Msg)
}

func syntaxErr(line int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// pline is one line of the patch text.
type pline struct {
	text string // without "\n" and without a final "\r"
	cr   bool   // the line ended in "\r\n"
}

func splitPatch(s string) []pline {
	n := strings.Count(s, "\n") + 1
	out := make([]pline, 0, n)
	for s != "" {
		l := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			l, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		cr := strings.HasSuffix(l, "\r")
		if cr {
			l = l[:len(l)-1]
		}
		out = append(out, pline{l, cr})
	}
	return out
}

// Parse reads a patch in either format. A patch with no file section
// answers a SyntaxError.
func Parse(text string) (*Patch, error) {
	lines := splitPatch(text)
	first := ""
	for _, l := range lines {
		if t := strings.TrimSpace(l.text); t != "" {
			first = t
			break
		}
	}
	var p *Patch
	var err error
	if first == beginPatch {
		p, err = parseCodex(lines)
	} else {
		p, err = parseUnified(lines)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, &SyntaxError{Msg: "The patch changes no file: give a unified diff (--- a/x, +++ b/x, @@ hunks) or a Codex patch (*** Begin Patch … *** End Patch)."}
	}
	return p, nil
}
