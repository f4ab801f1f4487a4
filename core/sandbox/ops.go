package sandbox

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/patch"
	"corral/core/paths"
	"corral/core/slots"
)

// Limits of the list, find and grep methods.
const (
	MaxListEntries = 1000
	MaxFindMatches = 1000
	DefaultMatches = 100
	MaxGrepMatches = 1000
	maxPattern     = 4096
)

// ReadArgs are file.read's parameters.
type ReadArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	Path    string
	Offset  int
	Limit   int
	// Tail returns the last this many lines instead (an extension, not
	// with Offset or Limit; docs/protocol.md).
	Tail int
	// Encoding "base64" returns the file's bytes, whatever they are:
	// Offset is then a byte offset (0-based) and Limit a number of bytes
	// (at most fsbox.MaxBase64Bytes).
	Encoding string
	// ByteOffset is, with Encoding "base64", the first byte to return,
	// as Offset says it (an extension: MCP's file_read names it so).
	ByteOffset int64
}

// Read answers file.read.
func (s *Sandbox) Read(ctx context.Context, c Caller, a ReadArgs) (fsbox.ReadResult, error) {
	var res fsbox.ReadResult
	o, err := s.beginOn(ctx, c, a.Context, "file.read", a.Reason, a.Path)
	if err != nil {
		return res, err
	}
	if a.Offset < 0 || a.Limit < 0 {
		return res, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "offset and limit must not be negative."))
	}
	if a.Tail < 0 || a.ByteOffset < 0 {
		return res, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "tail and byte_offset must not be negative."))
	}
	raw := false
	switch a.Encoding {
	case "", "text":
	case "base64":
		raw = true
		o.ev.Detail = appendDetail(o.ev.Detail, "base64")
	default:
		o.ev.Target = a.Path
		return res, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "encoding must be \"text\" or \"base64\"."))
	}
	if msg := ReadConflict(raw, a.Offset != 0, a.Limit != 0, a.Tail != 0, a.ByteOffset != 0); msg != "" {
		o.ev.Target = a.Path
		return res, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "%s", msg))
	}
	d, t, err := o.target(a.Path, needRead)
	if err == nil && raw {
		off := int64(a.Offset)
		if a.ByteOffset != 0 {
			off = a.ByteOffset
		}
		res, err = d.ReadBase64(t.RelSlash(), off, a.Limit)
	} else if err == nil && a.Tail > 0 {
		// The last lines: the file is read to count them, then from
		// there, under this one event (a file cut short in between
		// answers as offset past its end does).
		if res, err = d.Read(t.RelSlash(), 1, 1); err == nil && res.Type == "text" {
			res, err = d.Read(t.RelSlash(), max(1, res.TotalLines-a.Tail+1), a.Tail)
			o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("tail %d", a.Tail))
		}
	} else if err == nil {
		res, err = d.Read(t.RelSlash(), a.Offset, a.Limit)
	}
	if err == nil && raw {
		o.ev.Bytes = int64(len(res.Data))
		o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("bytes %d–%d of %d", res.Offset, res.Offset+int64(len(res.Data)), res.Bytes))
	} else if err == nil {
		o.ev.Bytes = res.Bytes
		if res.Encoding != "" {
			o.ev.Detail = appendDetail(o.ev.Detail, res.Encoding)
		}
		if res.Type == "text" {
			o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("%d of %d lines", res.OutputLines, res.TotalLines))
		} else {
			o.ev.Detail = appendDetail(o.ev.Detail, res.MimeType)
		}
	}
	return res, o.end(ctx, err)
}

// ReadConflict says which of file.read's parameters, given (true) or
// not, do not go together, or returns "": the one wording of the check,
// for file.read and for MCP's file_read, which checks the arguments as
// the client gave them before its schema's defaults fill them in (and
// whose base64 reads always go by byte_offset).
func ReadConflict(base64, offset, limit, tail, byteOffset bool) string {
	switch {
	case base64 && (tail || byteOffset && (offset || limit)):
		return "With encoding=base64, give byte_offset (and no tail, offset or limit): up to 4 MiB from there come back."
	case byteOffset && !base64:
		return "byte_offset is for encoding=base64; for text give offset (a line number)."
	case tail && (offset || limit):
		return "Give tail or offset/limit, not both."
	}
	return ""
}

// WriteArgs are file.write's parameters.
type WriteArgs struct {
	Context  *Context
	Reason   string // why, in the agent\'s words; shown if the owner is asked
	Path     string
	Content  string
	Append   bool
	Encoding string
}

// WriteResult is file.write's answer.
type WriteResult struct {
	Path  string
	Bytes int64
}

// Write answers file.write.
func (s *Sandbox) Write(ctx context.Context, c Caller, a WriteArgs) (WriteResult, error) {
	o, err := s.beginOn(ctx, c, a.Context, "file.write", a.Reason, a.Path)
	if err != nil {
		return WriteResult{}, err
	}
	data := []byte(a.Content)
	switch a.Encoding {
	case "", "utf8", "utf-8":
	case "base64":
		if data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			o.ev.Target = a.Path
			return WriteResult{}, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "The content is not valid base64."))
		}
	default:
		o.ev.Target = a.Path
		return WriteResult{}, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "encoding must be \"utf8\" or \"base64\"."))
	}
	if a.Append {
		o.ev.Detail = appendDetail(o.ev.Detail, "append")
	}
	o.data = data
	d, t, err := o.target(a.Path, needWrite)
	var n int64
	var before []prior
	if err == nil {
		before, err = s.priors(o.keeper, d, t.RelSlash(), true, a.Append)
	}
	var changes []audit.Change
	if err == nil && s.keeping() {
		if a.Append {
			changes = appended(before, t.Visible, data)
		} else {
			changes = written(before, t.Visible, data)
		}
	}
	if err == nil {
		err = o.change(changes, func() error {
			var err error
			n, err = d.Write(t.RelSlash(), data, a.Append)
			o.ev.Bytes = n
			s.grew(t.Dir, n)
			return err
		})
	}
	return WriteResult{Path: t.Visible, Bytes: n}, o.end(ctx, err)
}

// EditArgs are file.edit's parameters: one edit (old_text, new_text,
// replace_all) or several in order (edits), as the reference MCP
// filesystem server takes them.
type EditArgs struct {
	Context    *Context
	Reason     string // why, in the agent\'s words; shown if the owner is asked
	Path       string
	OldText    *string
	NewText    *string
	ReplaceAll bool
	Edits      []fsbox.Replacement
	DryRun     bool
}

// MaxEdits is how many edits one file.edit call may make.
const MaxEdits = 1000

// maxDiffBytes caps the diff file.edit returns.
const maxDiffBytes = 64 << 10

// EditResult is file.edit's answer.
type EditResult struct {
	Path         string
	Replacements int
	// Diff is the change as a unified diff (cut at 64 KiB, DiffTruncated
	// then set).
	Diff          string
	DiffTruncated bool
	DryRun        bool
}

// Edit answers file.edit.
func (s *Sandbox) Edit(ctx context.Context, c Caller, a EditArgs) (EditResult, error) {
	o, err := s.beginOn(ctx, c, a.Context, "file.edit", a.Reason, a.Path)
	if err != nil {
		return EditResult{}, err
	}
	edits := a.Edits
	switch {
	case a.OldText != nil || a.NewText != nil:
		o.ev.Target = a.Path
		switch {
		case len(edits) > 0:
			return EditResult{}, o.end(ctx, errs.New(errs.InvalidParams, a.Path, "Give either old_text and new_text, or a list of edits, not both."))
		case a.OldText == nil:
			return EditResult{}, o.end(ctx, errs.New(errs.InvalidParams, "", "The parameter %q is missing.", "old_text"))
		case a.NewText == nil:
			return EditResult{}, o.end(ctx, errs.New(errs.InvalidParams, "", "The parameter %q is missing.", "new_text"))
		}
		o.ev.Target = ""
		edits = []fsbox.Replacement{{Old: *a.OldText, New: *a.NewText, All: a.ReplaceAll}}
	case len(edits) == 0:
		o.ev.Target = a.Path
		return EditResult{}, o.end(ctx, errs.New(errs.InvalidParams, "", "The parameter %q (or %q) is missing.", "old_text", "edits"))
	case len(edits) > MaxEdits:
		o.ev.Target = a.Path
		return EditResult{}, o.end(ctx, errs.New(errs.TooLarge, a.Path, "One call may make at most %d edits.", MaxEdits))
	}
	if a.DryRun {
		o.ev.Detail = appendDetail(o.ev.Detail, "dry run")
	}
	d, t, err := o.target(a.Path, needWrite)
	res := EditResult{Path: t.Visible, DryRun: a.DryRun}
	if err != nil {
		return res, o.end(ctx, err)
	}
	// Read and check every edit first; keep the old content; then write.
	before, after, counts, err := d.EditText(t.RelSlash(), edits, true)
	if err == nil && !a.DryRun {
		var kept []audit.Change
		if s.keeping() {
			var p []prior
			if p, err = s.priors(o.keeper, d, t.RelSlash(), true, false); err == nil {
				kept = written(p, t.Visible, after)
			}
		}
		if err == nil {
			err = o.change(kept, func() error {
				_, err := d.Write(t.RelSlash(), after, false)
				return err
			})
		}
	}
	for _, n := range counts {
		res.Replacements += n
	}
	o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("%d replacements", res.Replacements))
	if len(edits) > 1 {
		o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("%d edits", len(edits)))
	}
	if err == nil {
		res.Diff = patch.Diff(strings.TrimPrefix(t.Visible, "/"), strings.TrimPrefix(t.Visible, "/"), before, after)
		if len(res.Diff) > maxDiffBytes {
			cut := strings.LastIndexByte(res.Diff[:maxDiffBytes], '\n')
			res.Diff, res.DiffTruncated = res.Diff[:cut+1], true
		}
	}
	return res, o.end(ctx, err)
}

// DeleteArgs are file.delete's parameters.
type DeleteArgs struct {
	Context   *Context
	Reason    string // why, in the agent\'s words; shown if the owner is asked
	Path      string
	Recursive bool
}

// PathResult answers methods whose result is just a path.
type PathResult struct {
	Path string
}

// Delete answers file.delete.
func (s *Sandbox) Delete(ctx context.Context, c Caller, a DeleteArgs) (PathResult, error) {
	detail := ""
	if a.Recursive {
		detail = "recursive"
	}
	return on(s, ctx, c, a.Context, onPath{name: "file.delete", reason: a.Reason, path: a.Path, need: needDelete, detail: detail},
		func(o *op, d fsbox.Dir, t paths.Target) (PathResult, error) {
			var before []prior
			var err error
			if a.Recursive || !isDirAt(d, t.RelSlash()) {
				before, err = s.priors(o.keeper, d, t.RelSlash(), false, false)
			}
			if err == nil {
				err = o.change(removed(before), func() error { return d.Delete(t.RelSlash(), a.Recursive) })
			}
			return PathResult{Path: t.Visible}, err
		})
}

// MoveArgs are file.move's parameters.
type MoveArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	From    string
	To      string
}

// MoveResult is file.move's answer.
type MoveResult struct {
	From string
	To   string
}

// Move answers file.move.
func (s *Sandbox) Move(ctx context.Context, c Caller, a MoveArgs) (MoveResult, error) {
	o, err := s.beginOn(ctx, c, a.Context, "file.move", a.Reason, a.From)
	if err != nil {
		return MoveResult{}, err
	}
	src, from, err := o.target(a.From, needDelete)
	if err != nil {
		return MoveResult{}, o.end(ctx, err)
	}
	dst, to, err := o.target(a.To, needWrite)
	var before []prior
	if err == nil {
		before, err = s.priors(o.keeper, src, from.RelSlash(), false, false)
	}
	if err == nil {
		err = o.change(moved(before, from.Visible, to.Visible), func() error { return fsbox.Move(src, from.RelSlash(), dst, to.RelSlash()) })
	}
	return MoveResult{From: from.Visible, To: to.Visible}, o.end(ctx, err)
}

// FolderArgs are folder.create's parameters.
type FolderArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	Path    string
}

// FolderResult is folder.create's answer: Created is false when the
// folder was there already.
type FolderResult struct {
	Path    string
	Created bool
}

// CreateFolder answers folder.create: it makes the folder and any missing
// folders above it. Each folder it made is a change of kind created
// (Dir), so an undo removes them again while they are empty.
func (s *Sandbox) CreateFolder(ctx context.Context, c Caller, a FolderArgs) (FolderResult, error) {
	return on(s, ctx, c, a.Context, onPath{name: "folder.create", reason: a.Reason, path: a.Path, need: needWrite},
		func(o *op, d fsbox.Dir, t paths.Target) (FolderResult, error) {
			if s.keeping() {
				// The folders it will make, as the intent: undoing a crash
				// removes them again while they are empty.
				var planned []audit.Change
				for _, m := range missingDirs(d, t.RelSlash()) {
					planned = append(planned, audit.Change{Path: d.Visible(m), Kind: audit.Created, Dir: true, Mode: 0o755})
				}
				if len(planned) > 0 {
					if err := o.intend(planned); err != nil {
						return FolderResult{}, err
					}
				}
			}
			made, err := d.CreateDir(t.RelSlash())
			if len(made) == 0 && err == nil {
				o.ev.Detail = appendDetail(o.ev.Detail, "already there")
			}
			if s.keeping() {
				for _, m := range made {
					o.ev.Changes = append(o.ev.Changes, audit.Change{Path: d.Visible(m), Kind: audit.Created, Dir: true, Mode: 0o755})
				}
			}
			return FolderResult{Path: t.Visible, Created: len(made) > 0}, err
		})
}

// missingDirs lists the folders of rel (a clean slash path, perhaps with
// a trailing slash) that do not exist yet, outermost first.
func missingDirs(d fsbox.Dir, rel string) []string {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "." || rel == "" {
		return nil
	}
	var out []string
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if _, err := d.Stat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// isDirAt reports whether rel of d is a folder (not following a link):
// a non-recursive delete of one changes nothing that needs a version.
func isDirAt(d fsbox.Dir, rel string) bool {
	info, err := d.Stat(rel)
	return err == nil && info.Type == "dir"
}

// StatArgs are file.stat's parameters.
type StatArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	Path    string
}

// Stat answers file.stat.
func (s *Sandbox) Stat(ctx context.Context, c Caller, a StatArgs) (fsbox.Info, error) {
	return on(s, ctx, c, a.Context, onPath{name: "file.stat", reason: a.Reason, path: a.Path, need: needRead},
		func(_ *op, d fsbox.Dir, t paths.Target) (fsbox.Info, error) { return d.Stat(t.RelSlash()) })
}

// ListArgs are folder.list's parameters.
type ListArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	Path    string
	Depth   int
}

// ListResult is folder.list's answer.
type ListResult struct {
	Path      string
	Entries   []fsbox.Info
	Truncated bool
}

// List answers folder.list.
func (s *Sandbox) List(ctx context.Context, c Caller, a ListArgs) (ListResult, error) {
	var res ListResult
	o, err := s.beginOn(ctx, c, a.Context, "folder.list", a.Reason, a.Path)
	if err != nil {
		return res, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	if a.Depth == 0 {
		a.Depth = 1
	}
	d, t, err := o.target(a.Path, needRead)
	if err == nil {
		res.Entries, res.Truncated, err = d.List(t.RelSlash(), a.Depth, MaxListEntries)
		o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("depth %d, %d entries", a.Depth, len(res.Entries)))
	}
	res.Path = t.Visible
	if res.Entries == nil {
		res.Entries = []fsbox.Info{}
	}
	return res, o.end(ctx, err)
}

// FindArgs are file.find's parameters.
type FindArgs struct {
	Context *Context
	Reason  string // why, in the agent\'s words; shown if the owner is asked
	Pattern string
	Path    string
}

// FindResult is file.find's answer.
type FindResult struct {
	Matches   []string
	Truncated bool
}

// Find answers file.find.
func (s *Sandbox) Find(ctx context.Context, c Caller, a FindArgs) (FindResult, error) {
	res := FindResult{Matches: []string{}}
	o, err := s.beginOn(ctx, c, a.Context, "file.find", a.Reason, a.Path)
	if err != nil {
		return res, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	o.ev.Detail = appendDetail(o.ev.Detail, "pattern "+a.Pattern)
	if a.Pattern == "" || len(a.Pattern) > maxPattern || strings.ContainsRune(a.Pattern, 0) {
		o.ev.Target = a.Path
		return res, o.end(ctx, errs.New(errs.InvalidParams, "", "pattern must be a glob of 1 to %d bytes.", maxPattern))
	}
	d, t, err := o.target(a.Path, needRead)
	var release func()
	if err == nil {
		release, err = o.searchSlot()
	}
	if err == nil {
		var m []string
		m, res.Truncated, err = d.Find(t.RelSlash(), a.Pattern, MaxFindMatches)
		release()
		if m != nil {
			res.Matches = m
		}
	}
	return res, o.end(ctx, err)
}

// GrepArgs are file.grep's parameters.
type GrepArgs struct {
	Context    *Context
	Reason     string // why, in the agent\'s words; shown if the owner is asked
	Pattern    string
	Path       string
	Glob       string
	MaxMatches int
}

// GrepResult is file.grep's answer.
type GrepResult struct {
	Matches   []fsbox.Match
	Truncated bool
}

// withoutSecrets leaves out of a search the lines of files that hold
// secrets (paths.Sensitive) when the folder searched was allowed by the
// owner's answer or rule (outside the agent's folders): an answer or a
// folder-wide rule never covers a secret inside the folder, and reading
// one on its own is asked with the warning, so a search must not read it
// either.
func (o *op) withoutSecrets(t paths.Target, m []fsbox.Match) []fsbox.Match {
	if o.ev.DecidedBy != audit.ByRule && o.ev.DecidedBy != audit.ByOwner {
		return m
	}
	out := m[:0]
	for _, x := range m {
		host := x.Path
		if rest, ok := strings.CutPrefix(x.Path, t.Visible); ok {
			host = t.Host + rest
		}
		if paths.Sensitive(host, o.s.layout.Home) == "" {
			out = append(out, x)
		}
	}
	return out
}

// Grep answers file.grep.
func (s *Sandbox) Grep(ctx context.Context, c Caller, a GrepArgs) (GrepResult, error) {
	res := GrepResult{Matches: []fsbox.Match{}}
	o, err := s.beginOn(ctx, c, a.Context, "file.grep", a.Reason, a.Path)
	if err != nil {
		return res, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	o.ev.Detail = appendDetail(o.ev.Detail, "pattern "+a.Pattern)
	if len(a.Pattern) > maxPattern || len(a.Glob) > maxPattern {
		o.ev.Target = a.Path
		return res, o.end(ctx, errs.New(errs.InvalidParams, "", "pattern and glob must be at most %d bytes.", maxPattern))
	}
	re, rerr := regexp.Compile(a.Pattern)
	switch {
	case a.Pattern == "":
		o.ev.Target = a.Path
		return res, o.end(ctx, errs.New(errs.InvalidParams, "", "The pattern is empty; give a regular expression to search for."))
	case rerr != nil:
		o.ev.Target = a.Path
		var se *syntax.Error
		why := ""
		if errors.As(rerr, &se) {
			why = fmt.Sprintf(" (%s: %q)", se.Code, se.Expr)
		}
		return res, o.end(ctx, errs.New(errs.InvalidParams, "", "pattern is not a valid regular expression in RE2 syntax%s.", why))
	}
	switch {
	case a.MaxMatches <= 0:
		a.MaxMatches = DefaultMatches
	case a.MaxMatches > MaxGrepMatches:
		a.MaxMatches = MaxGrepMatches
	}
	d, t, err := o.target(a.Path, needRead)
	var release func()
	if err == nil {
		release, err = o.searchSlot()
	}
	if err == nil {
		var m []fsbox.Match
		m, res.Truncated, err = d.Grep(t.RelSlash(), re, a.Glob, a.MaxMatches)
		release()
		if m != nil {
			res.Matches = o.withoutSecrets(t, m)
		}
	}
	return res, o.end(ctx, err)
}

// Hunk searches (file.apply_patch, through Op.SearchSlot), greps (file.grep) and finds
// (file.find) run in Corral's own process: a costly one takes a core
// until it ends (a grep reads its whole tree, a find walks it). One agent
// runs one such search at a time (its others wait, cancellable), so one
// agent's searches never take more than a core from the others and the
// owner; all agents together run at most two per core (at least four),
// so two agents holding theirs still leave room for the others'.
const (
	searchPerClient = 1
	searchQueueWait = 2 * time.Minute
)

var searchWords = slots.Words{
	Cancelled: "The call was cancelled while it waited for its turn to search; nothing was changed.",
	Mine:      "%s already runs %d search (a patch being placed, a grep or a find) at once, its limit; this one waited %s for it to finish and did not run. Nothing was changed; try again when it has finished.",
	Full:      "Corral already runs %d searches (patches being placed, greps, finds) at once, its limit for all agents together; this one waited %s and did not run. Nothing was changed; try again shortly.",
}

func newSearchSlots() *slots.Slots {
	return slots.New(max(4, 2*runtime.NumCPU()), searchPerClient, searchQueueWait, searchWords)
}
