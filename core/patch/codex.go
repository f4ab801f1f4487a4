package patch

import "strings"

// Codex markers.
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File:"
	deleteFile = "*** Delete File:"
	updateFile = "*** Update File:"
	moveTo     = "*** Move to:"
	endOfFile  = "*** End of File"
)

// marker returns l without trailing blanks when it is a line that ends a
// file section's body ("*** Add File: …", "*** End Patch", …), else "".
func marker(l string) string {
	m := strings.TrimRight(l, " \t")
	for _, p := range []string{addFile, deleteFile, updateFile, endPatch} {
		if strings.HasPrefix(m, p) {
			return m
		}
	}
	return ""
}

func parseCodex(lines []pline) (*Patch, error) {
	p := &Patch{Format: Codex}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i].text) == "" {
		i++
	}
	i++ // "*** Begin Patch", checked by Parse
	for i < len(lines) {
		l := strings.TrimRight(lines[i].text, " \t")
		n := i + 1
		switch {
		case l == endPatch:
			return p, nil
		case l == "":
			i++
		case strings.HasPrefix(l, addFile):
			f := File{Action: Add, Path: strings.TrimSpace(l[len(addFile):]), Line: n}
			if f.Path == "" {
				return nil, syntaxErr(n, "\"*** Add File:\" needs a path.")
			}
			h := Hunk{Line: n + 1}
			i++
			for ; i < len(lines) && marker(lines[i].text) == ""; i++ {
				t := lines[i].text
				if !strings.HasPrefix(t, "+") {
					return nil, syntaxErr(i+1, "every line of an added file starts with +.")
				}
				if len(h.Lines) == 0 {
					f.CRLF = lines[i].cr
				}
				h.Lines = append(h.Lines, Line{Op: '+', Text: t[1:]})
			}
			if len(h.Lines) > 0 {
				f.Hunks = []Hunk{h}
			}
			p.Files = append(p.Files, f)
		case strings.HasPrefix(l, deleteFile):
			f := File{Action: Delete, Path: strings.TrimSpace(l[len(deleteFile):]), Line: n}
			if f.Path == "" {
				return nil, syntaxErr(n, "\"*** Delete File:\" needs a path.")
			}
			p.Files = append(p.Files, f)
			i++
		case strings.HasPrefix(l, updateFile):
			f, next, err := codexUpdate(lines, i)
			if err != nil {
				return nil, err
			}
			p.Files = append(p.Files, f)
			i = next
		default:
			return nil, syntaxErr(n, "expected \"*** Add File:\", \"*** Delete File:\", \"*** Update File:\" or \"*** End Patch\", found %q.", clip(l))
		}
	}
	return nil, syntaxErr(len(lines), "the patch has no \"*** End Patch\" line; it may have been cut off, so nothing was applied.")
}

// codexUpdate reads the "*** Update File:" section starting at lines[i].
func codexUpdate(lines []pline, i int) (File, int, error) {
	n := i + 1
	f := File{Action: Update, Path: strings.TrimSpace(strings.TrimRight(lines[i].text, " \t")[len(updateFile):]), Line: n}
	if f.Path == "" {
		return f, 0, syntaxErr(n, "\"*** Update File:\" needs a path.")
	}
	i++
	if i < len(lines) {
		if m := strings.TrimRight(lines[i].text, " \t"); strings.HasPrefix(m, moveTo) {
			if f.MoveTo = strings.TrimSpace(m[len(moveTo):]); f.MoveTo == "" {
				return f, 0, syntaxErr(i+1, "\"*** Move to:\" needs a path.")
			}
			i++
		}
	}
	var h *Hunk
	flush := func() {
		if h != nil && len(h.Lines) > 0 {
			// Blank lines at a hunk's end are taken as spacing, not as
			// context the file must have.
			for len(h.Lines) > 0 && h.Lines[len(h.Lines)-1] == (Line{Op: ' '}) && h.blank > 0 {
				h.Lines = h.Lines[:len(h.Lines)-1]
				h.blank--
			}
			if len(h.Lines) > 0 {
				f.Hunks = append(f.Hunks, *h)
			}
		}
		h = nil
	}
	for ; i < len(lines) && marker(lines[i].text) == ""; i++ {
		t := lines[i].text
		switch m := strings.TrimRight(t, " \t"); {
		case m == endOfFile:
			if h == nil || len(h.Lines) == 0 {
				return f, 0, syntaxErr(i+1, "\"*** End of File\" must follow a hunk's lines.")
			}
			h.AtEOF = true
			flush()
		case m == "@@" || strings.HasPrefix(t, "@@ "):
			if h != nil && len(h.Lines) > 0 {
				flush()
			}
			if h == nil {
				h = &Hunk{Line: i + 1}
			}
			if a := strings.TrimPrefix(t, "@@ "); m != "@@" && strings.TrimSpace(a) != "" {
				h.Anchors = append(h.Anchors, a)
			}
		case t == "":
			if h == nil {
				continue // spacing before the first hunk
			}
			h.Lines = append(h.Lines, Line{Op: ' '})
			h.blank++
		case t[0] == ' ' || t[0] == '-' || t[0] == '+':
			if h == nil {
				h = &Hunk{Line: i + 1} // the first hunk may leave out "@@"
			}
			h.Lines = append(h.Lines, Line{Op: t[0], Text: t[1:]})
			h.blank = 0
		default:
			return f, 0, syntaxErr(i+1, "in an update, each line starts with a space (unchanged), - (removed) or + (added), or is an @@ line; found %q.", clip(t))
		}
	}
	if h != nil && len(h.Lines) == 0 {
		return f, 0, syntaxErr(h.Line, "this @@ hunk has no lines.")
	}
	flush()
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return f, 0, syntaxErr(n, "the update of %s has no hunks.", f.Path)
	}
	return f, i, nil
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
