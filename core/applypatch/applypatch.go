// Package applypatch answers file.apply_patch over the sandbox's
// operation skeleton (sandbox.Op): it applies a unified diff or a Codex
// patch (core/patch, the pure parser) to the files it names, all or
// nothing, under one audit event and one journal intent.
//
// Guarantees: every path of a patch resolves, and is decided, like any
// other path of the caller's (Op.Target); every file is read and every
// hunk checked before anything is written; the old contents are kept in
// the caller's share of the version store (Op.Keep) and the whole patch
// committed as one intent (Op.Change) before a file changes, so a crash
// part-way is rolled back by the sandbox's Recover like any other change;
// a failure part-way puts back what was already changed; the event is
// recorded before the answer (Op.End). Hunk searches take the sandbox's
// search turns (Op.SearchSlot), so one agent's patches run one at a time.
//
// Not guaranteed: a patch is not atomic for a reader watching the files
// while it is committed; each file is replaced atomically.
package applypatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/patch"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
)

// Service applies patches over a sandbox.
type Service struct{ box *sandbox.Sandbox }

// New returns the patch service over box.
func New(box *sandbox.Sandbox) *Service { return &Service{box: box} }

// Limits of file.apply_patch.
const (
	MaxPatchBytes = 8 << 20 // a larger patch answers too_large
	MaxPatchFiles = 1000    // files one patch may touch
	// MaxPatchedFile bounds each file a patch reads: its old content is
	// held for the all-or-nothing guarantee.
	MaxPatchedFile = fsbox.MaxEditBytes
)

// PatchArgs are file.apply_patch's parameters.
type PatchArgs struct {
	Context *sandbox.Context
	Reason  string // why, in the agent's words; shown if the owner is asked
	Patch   string
	DryRun  bool
}

// Actions of a patched file, the values of PatchFile.Action.
const (
	PatchCreated  = "created"
	PatchModified = "modified"
	PatchDeleted  = "deleted"
	PatchMoved    = "moved"
)

// PatchFile is what a patch did (or, in a dry run, would do) to one file.
type PatchFile struct {
	Path    string // agent-visible; for a move, the new path
	Action  string
	From    string // a move's old path
	Hunks   int
	Offsets []int // per hunk, lines away from the stated position; only when one is not 0
}

// PatchResult is file.apply_patch's answer.
type PatchResult struct {
	Files  []PatchFile
	DryRun bool
}

// change is one file of a checked patch: where it is, what it held and
// what it will hold.
type change struct {
	out PatchFile
	// src is the file as it is (update, delete, a move's source); for a
	// created file, the new file.
	src    fsbox.Dir
	srcRel string
	old    []byte      // src's content, kept to put it back
	perm   fs.FileMode // src's permission bits
	// dst is where the new content goes: src itself for a modification,
	// the new path for a move; unset for a deletion.
	dst     fsbox.Dir
	dstRel  string
	content []byte
}

func (ch *change) writes() bool  { return ch.out.Action != PatchDeleted }
func (ch *change) removes() bool { return ch.out.Action == PatchDeleted || ch.out.Action == PatchMoved }
func (ch *change) creates() bool { return ch.out.Action == PatchCreated || ch.out.Action == PatchMoved }

// ApplyPatch answers file.apply_patch: it applies a unified diff or a
// Codex patch (package patch) to the files it names, all or nothing.
// Every path resolves, and is decided, like any other path of the
// caller's; every file is read and every hunk checked before anything is
// written; then the new contents are staged beside their files and put in
// place, and if that fails part-way the files already changed get their
// old content back. One audit event records the whole patch.
func (s *Service) ApplyPatch(ctx context.Context, c sandbox.Caller, a PatchArgs) (PatchResult, error) {
	res := PatchResult{Files: []PatchFile{}, DryRun: a.DryRun}
	o, err := s.box.BeginOn(ctx, c, a.Context, "file.apply_patch", a.Reason, "")
	if err != nil {
		return res, err
	}
	ev := o.Event()
	if len(a.Patch) > MaxPatchBytes {
		ev.Target = "(patch)"
		return res, o.End(errs.New(errs.TooLarge, "", "The patch is %d bytes; Corral applies patches up to %d bytes. Split it into smaller patches.", len(a.Patch), MaxPatchBytes))
	}
	p, err := patch.Parse(a.Patch)
	if err != nil {
		ev.Target = "(patch)"
		return res, o.End(errs.New(errs.InvalidParams, "", "The patch could not be read. %s", strings.TrimSuffix(err.Error(), ".")+"."))
	}
	if len(p.Files) > MaxPatchFiles {
		ev.Target = "(patch)"
		return res, o.End(errs.New(errs.TooLarge, "", "The patch changes %d files; Corral applies at most %d in one patch.", len(p.Files), MaxPatchFiles))
	}
	plan, err := planPatch(o, p)
	if err == nil && !a.DryRun {
		if err = ctx.Err(); err != nil {
			err = errs.Wrap(err, errs.Timeout, "", "The call was cancelled before the patch was written; nothing was changed.")
		} else {
			var kept []audit.Change
			if kept, err = s.keep(o, plan); err == nil {
				err = o.Change(kept, func() error { return commitPatch(plan) })
			}
		}
	}
	var detail []string
	for _, ch := range plan {
		res.Files = append(res.Files, ch.out)
		detail = append(detail, describeChange(ch.out))
		ev.Bytes += int64(len(ch.content))
	}
	if a.DryRun {
		detail = append(detail, "dry run")
		res.DryRun = true
	}
	d := string(p.Format) + " patch"
	if len(detail) > 0 {
		d += ": " + strings.Join(detail, ", ")
	}
	o.AddDetail(d)
	if err != nil {
		res.Files = []PatchFile{}
	}
	return res, o.End(err)
}

// keep keeps the old contents of a checked patch, in the caller's share,
// and describes what committing it changes; without a version store it
// keeps and describes nothing.
func (s *Service) keep(o *sandbox.Op, plan []*change) ([]audit.Change, error) {
	if s.box.Versions() == nil {
		return nil, nil
	}
	var out []audit.Change
	for _, ch := range plan {
		c := audit.Change{Path: ch.out.Path, From: ch.out.From, Mode: uint32(ch.perm)}
		if ch.out.Action != PatchCreated {
			c.SizeBefore = int64(len(ch.old))
			var err error
			if c.Version, c.NotKept, err = o.Keep(ch.out.Path, ch.old); err != nil {
				return nil, err
			}
		}
		if ch.writes() {
			c.SizeAfter, c.After = int64(len(ch.content)), versions.Sum(ch.content)
		}
		switch ch.out.Action {
		case PatchCreated:
			c.Kind, c.Mode = audit.Created, 0o644
		case PatchModified:
			c.Kind = audit.Modified
		case PatchDeleted:
			c.Kind, c.Path = audit.Deleted, ch.out.Path
		case PatchMoved:
			c.Kind = audit.Moved
		}
		out = append(out, c)
	}
	return out, nil
}

func describeChange(f PatchFile) string {
	d := f.Action + " " + f.Path
	if f.From != "" {
		d = "moved " + f.From + " to " + f.Path
	}
	if f.Hunks > 0 {
		d += fmt.Sprintf(" (%d hunks", f.Hunks)
		if f.Offsets != nil {
			d += fmt.Sprintf(", offsets %v", f.Offsets)
		}
		d += ")"
	}
	return d
}

// decidedRank orders how an access was decided, so that the event of a
// patch touching several places says the most notable: the owner over a
// rule over a root over the scope.
func decidedRank(by audit.DecidedBy) int {
	switch by {
	case audit.ByRoot:
		return 1
	case audit.ByRule:
		return 2
	case audit.ByOwner:
		return 3
	}
	return 0
}

// planPatch resolves, decides and reads every file of p and applies its
// hunks in memory. It writes nothing. The event's target lists the files.
func planPatch(o *sandbox.Op, p *patch.Patch) ([]*change, error) {
	ev := o.Event()
	var plan []*change
	var targets []string
	by := audit.ByScope
	seen := map[string]string{} // host identity → visible path
	defer func() {
		ev.Target = strings.Join(targets, ", ")
		if ev.Decision == audit.Allow || ev.Decision == "" {
			if decidedRank(by) > decidedRank(ev.DecidedBy) {
				ev.DecidedBy = by
			}
		}
	}()
	// resolve decides one path of the patch; the event's target is set
	// once, by planPatch, so each call starts from none.
	resolve := func(rel string, n policy.Access) (fsbox.Dir, paths.Target, error) {
		ev.Target = ""
		d, t, err := o.Target(rel, n)
		if err != nil {
			targets = append(targets, ev.Target)
			return d, t, err
		}
		if decidedRank(ev.DecidedBy) > decidedRank(by) {
			by = ev.DecidedBy
		}
		key := t.Host
		if key == "" {
			key = filepath.Join(t.Dir, filepath.FromSlash(t.Rel))
		}
		if prev, dup := seen[key]; dup {
			targets = append(targets, t.Visible)
			return d, t, errs.New(errs.InvalidParams, t.Visible, "The patch names %s more than once (also as %s); put all its changes in one section.", t.Visible, prev)
		}
		seen[key] = t.Visible
		targets = append(targets, t.Visible)
		return d, t, nil
	}
	for i := range p.Files {
		f := &p.Files[i]
		ch := &change{out: PatchFile{Hunks: len(f.Hunks)}}
		var n policy.Access
		switch {
		case f.Action == patch.Add:
			ch.out.Action, n = PatchCreated, policy.Write
		case f.Action == patch.Delete:
			ch.out.Action, n = PatchDeleted, policy.Delete
		case f.MoveTo != "":
			ch.out.Action, n = PatchMoved, policy.Delete
		default:
			ch.out.Action, n = PatchModified, policy.Write
		}
		d, t, err := resolve(f.Path, n)
		if err != nil {
			return plan, err
		}
		ch.src, ch.srcRel, ch.out.Path = d, t.RelSlash(), t.Visible
		if f.Action == patch.Add {
			if err := mustBeFree(d, ch.srcRel, t.Visible); err != nil {
				return plan, err
			}
			ch.dst, ch.dstRel = d, ch.srcRel
		} else {
			if ch.old, ch.perm, err = d.ReadFile(ch.srcRel, MaxPatchedFile); err != nil {
				return plan, err
			}
			if len(f.Hunks) > 0 && !fsbox.IsText(ch.old) {
				return plan, errs.New(errs.Binary, t.Visible, "%s is a binary file, so it can't be patched as text.", t.Visible)
			}
			ch.dst, ch.dstRel = d, ch.srcRel
		}
		release, err := o.SearchSlot()
		if err != nil {
			return plan, err
		}
		r, err := f.Apply(o.Context(), ch.old)
		release()
		if err != nil {
			var c *patch.Conflict
			if errors.As(err, &c) {
				return plan, errs.New(errs.Conflict, t.Visible, "%s Nothing was changed.", c.Describe(t.Visible))
			}
			if o.Context().Err() != nil {
				return plan, errs.Wrap(err, errs.Timeout, t.Visible, "The call was cancelled while the patch was being placed in %s; nothing was changed.", t.Visible)
			}
			return plan, err
		}
		ch.content = r.Content
		if r.Moved() {
			ch.out.Offsets = r.Offsets
		}
		if f.MoveTo != "" {
			d2, t2, err := resolve(f.MoveTo, policy.Write)
			if err != nil {
				return plan, err
			}
			if err := mustBeFree(d2, t2.RelSlash(), t2.Visible); err != nil {
				return plan, err
			}
			ch.dst, ch.dstRel = d2, t2.RelSlash()
			ch.out.From, ch.out.Path = ch.out.Path, t2.Visible
		}
		plan = append(plan, ch)
	}
	return plan, nil
}

// mustBeFree answers exists unless nothing is at rel of d yet.
func mustBeFree(d fsbox.Dir, rel, visible string) error {
	_, err := d.Stat(rel)
	switch errs.KindOf(err) {
	case "":
		return errs.New(errs.Exists, visible, "The patch creates %s, but something already exists there.", visible)
	case errs.NotFound:
		return nil
	}
	return err
}

// commitPatch writes a checked patch: it stages every new content beside
// its file (written and synced, in parallel), puts them in place, then
// removes deleted files and moves' old paths. If any step fails, what was
// already done is undone from the old contents the plan holds, and the
// first error is returned. It is the one place file.apply_patch changes
// files: a version store records the whole patch as one change here.
func commitPatch(plan []*change) error {
	for _, ch := range plan {
		// As file.write and file.move: a new name must not pass for one
		// of Corral's temporary files (the start-up sweep removes those).
		if ch.writes() && ch.creates() {
			if err := ch.dst.RefuseTempName(ch.dstRel); err != nil {
				return err
			}
		}
	}
	staged := make([]*fsbox.Staged, len(plan))
	errsOf := make([]error, len(plan))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, ch := range plan {
		if !ch.writes() {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			staged[i], errsOf[i] = ch.dst.Stage(ch.dstRel, ch.content, ch.perm, ch.creates())
		}()
	}
	wg.Wait()
	abort := func() {
		for _, st := range staged {
			if st != nil {
				st.Abort()
			}
		}
	}
	for _, err := range errsOf {
		if err != nil {
			abort()
			return err
		}
	}

	killpoint.Here("patch.staged")
	var done []int    // changes whose new content is in place
	var removed []int // changes whose old file is gone
	undo := func() {
		for _, i := range removed {
			ch := plan[i]
			if st, err := ch.src.Stage(ch.srcRel, ch.old, ch.perm, true); err == nil {
				st.Commit()
			}
		}
		for _, i := range done {
			ch := plan[i]
			if ch.creates() {
				ch.dst.Delete(ch.dstRel, false)
			} else {
				ch.dst.Write(ch.dstRel, ch.old, false)
			}
		}
		abort() // temporary files not yet renamed, and folders made for new files
	}
	for i, st := range staged {
		if st == nil {
			continue
		}
		if err := st.Commit(); err != nil {
			undo()
			return err
		}
		done = append(done, i)
		killpoint.Here("patch.commit")
	}
	for i, ch := range plan {
		if !ch.removes() {
			continue
		}
		if err := ch.src.Delete(ch.srcRel, false); err != nil {
			undo()
			return err
		}
		removed = append(removed, i)
	}
	return nil
}
