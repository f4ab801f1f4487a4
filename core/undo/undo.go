// Package undo is the owner's undo and versions (undo.preview, undo.apply,
// undo.client, version.restore, versions.list, versions.usage,
// versions.forget, changes.get) and the roll back of what a crash
// interrupted (RollBack, run by sandbox.Recover), built on core/sandbox's
// operation skeleton (sandbox.Op): the sandbox opens the owner's folders
// (OwnerDir), keeps what a change replaces (Priors), commits the intent
// (Op.Intend) and records the event (Op.End); this package plans and
// carries out putting changes back.
//
// The owner's undo. Every change an event recorded (audit.Change) can be
// put back from the version store: a created file is removed, a modified
// or deleted one gets its earlier content back, a moved one goes back to
// where it was. Before anything is written, every file is checked to
// still hold what the event left there; a file that changed again since
// is a conflict, named in the answer, and then nothing is written unless
// the owner asks to skip the conflicts. The undo itself is an event
// ("undo.apply") whose changes keep what it replaced, so it can be undone
// in turn.
package undo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/patch"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/core/versions"
)

// Service answers the owner's undo and versions methods over a sandbox.
// It is safe for concurrent use.
type Service struct {
	box      *sandbox.Sandbox
	versions *versions.Store // nil: no versions kept, nothing can be undone
	history  audit.Reader    // nil: the owner cannot undo
	undoMu   sync.Mutex      // one undo at a time
}

// New returns the undo of box, reading events back from history (nil:
// the owner cannot undo, though versions are still kept).
func New(box *sandbox.Sandbox, history audit.Reader) *Service {
	return &Service{box: box, versions: box.Versions(), history: history}
}

// resolve resolves p in scope as the sandbox does.
func (s *Service) resolve(scope, p string) (paths.Target, error) {
	l := s.box.Layout()
	return l.Resolve(scope, p)
}

// maxPreviewDiff caps each file's diff in a preview.
const maxPreviewDiff = 16 << 10

// UndoArgs are undo.preview's and undo.apply's parameters.
type UndoArgs struct {
	EventID int64
	// SkipConflicts applies what does not conflict and leaves the
	// conflicting files as they are; without it a conflict stops the
	// whole undo.
	SkipConflicts bool
	// Folder, when given, limits the undo to the changes at that
	// agent-visible path or under it ("Restore this folder"): the other
	// changes of the event stay as they are.
	Folder string
}

// UndoFile is what undoing one change does (or would do) to one file.
type UndoFile struct {
	Path   string
	Action string // "restore", "remove", "move_back", "none"
	From   string
	Kind   string // the change being undone
	// Conflict says why the file cannot be put back ("" when it can).
	Conflict  string
	SizeNow   int64
	SizeAfter int64 // after the undo
	Binary    bool
	Diff      string // from now to after the undo, for text
	// Version names the kept content the change replaced (what
	// version.restore puts back at Path); "" for a created file or one
	// whose content was not kept.
	Version string
}

// UndoResult answers undo.preview and undo.apply.
type UndoResult struct {
	EventID   int64
	Op        string
	Client    string
	User      string    // the event's scope
	Time      time.Time // when the event happened
	Files     []UndoFile
	Conflicts int
	Applied   bool
	// UndoEvent is the event that recorded the undo (undo it to redo).
	UndoEvent int64
	// Target is the event's target: a command's command line, a file's
	// path.
	Target string
	// Folders are the folders the event deleted that are gone now, each
	// with the files undoing puts back in it: what "Restore this folder"
	// (undo.apply with folder) restores. Empty when none is missing.
	Folders []UndoFolder
}

// UndoFolder is a folder an event deleted, missing now.
type UndoFolder struct {
	Path  string // agent-visible
	Files int    // the files under it the undo puts back
}

// undoStep is one planned change of an undo.
type undoStep struct {
	file    UndoFile
	scope   string
	change  audit.Change
	content []byte // what the path gets ("restore", "move_back")
}

func (s *Service) needOwner(c sandbox.Caller) error {
	if !c.Owner {
		return errs.New(errs.Forbidden, "", "Only the owner may look at versions or undo changes.")
	}
	if s.versions == nil || s.history == nil {
		return errs.New(errs.Unavailable, "", "Corral keeps no versions here, so nothing can be undone.")
	}
	return nil
}

// event reads one event back from the audit log.
func (s *Service) event(ctx context.Context, id int64) (audit.Event, error) {
	p, err := s.history.Query(ctx, audit.Filter{ID: id, Limit: 1})
	if err != nil {
		return audit.Event{}, errs.Wrap(err, errs.IO, "", "Corral could not read its audit log.")
	}
	if len(p.Events) == 0 {
		return audit.Event{}, errs.New(errs.NotFound, "", "There is no event %d in the audit log.", id)
	}
	return p.Events[0], nil
}

// state is what is at a path now.
type state struct {
	exists bool
	dir    bool
	link   string
	sum    string // content's SHA-256 for a regular file
	size   int64
	data   []byte // content, when small enough to diff
}

func (s *Service) stateAt(scope, vis string) (state, error) {
	d, rel, done, err := s.box.OwnerDir(scope, vis)
	if err != nil {
		return state{}, err
	}
	defer done()
	var st state
	_, err = d.Prior(rel, false, func(e fsbox.PriorEntry) error {
		if e.Rel != rel {
			return nil
		}
		st.exists, st.size = true, e.Info.Size()
		switch {
		case e.Info.IsDir():
			st.dir = true
			return errStop
		case e.Info.Mode()&fs.ModeSymlink != 0:
			st.link = e.Link
		case e.File != nil:
			data, err := readCapped(e.File, s.versions.MaxFile())
			if err != nil {
				return err
			}
			st.sum, st.data = versions.Sum(data), data
		default:
			st.sum = "unreadable"
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return state{}, err
	}
	return st, nil
}

var errStop = errors.New("stop")

func readCapped(f *os.File, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not read the file as it is now.")
	}
	if int64(len(data)) > max {
		return nil, errs.New(errs.TooLarge, "", "The file is larger than versions are kept for.")
	}
	return data, nil
}

// matches reports whether st is sum (a content's digest) or link (a
// symlink's target); both "" mean nothing at all.
func (st state) matches(sum, link string) bool {
	switch {
	case sum == "" && link == "":
		return !st.exists
	case link != "":
		return st.exists && st.link == link
	}
	return st.exists && !st.dir && st.link == "" && st.sum == sum
}

func changedSince(p string) string {
	return fmt.Sprintf("%s changed after this event (it is not what the event left there), so Corral will not overwrite it.", p)
}

// planUndo checks every change of ev against the disk and plans putting
// it back.
func (s *Service) planUndo(ev audit.Event) []*undoStep {
	var steps []*undoStep
	for i := len(ev.Changes) - 1; i >= 0; i-- {
		c := ev.Changes[i]
		st := &undoStep{scope: ev.User, change: c, file: UndoFile{Path: c.Path, Kind: string(c.Kind), From: c.From}}
		if c.Kind != audit.Created && !c.Dir {
			st.file.Version = c.Version
		}
		steps = append(steps, st)
		f := &st.file
		now, err := s.stateAt(ev.User, c.Path)
		if err != nil {
			f.Conflict = errs.As(err).Msg
			continue
		}
		f.SizeNow = now.size
		if c.Dir {
			s.planFolder(ev, c, now, f)
			continue
		}
		// What the event left at Path, and what the undo leaves there.
		leftSum, leftLink := c.After, ""
		if c.Kind == audit.Created || c.Kind == audit.Moved {
			leftLink = c.Link
			if c.Link != "" {
				leftSum = ""
			}
		}
		if c.Kind == audit.Deleted {
			leftSum = ""
		}
		switch c.Kind {
		case audit.Created:
			f.Action = "remove"
		case audit.Moved:
			f.Action = "move_back"
		default:
			f.Action = "restore"
		}
		var want []byte
		if c.Kind != audit.Created && c.Link == "" {
			if c.Version == "" {
				f.Conflict = "Its earlier content was not kept (" + sandbox.NotKeptSentence(c.NotKept) + "), so it cannot be put back."
				continue
			}
			data, err := s.versions.Read(c.Version, s.versions.MaxFile())
			if err != nil {
				f.Conflict = errs.As(err).Msg
				continue
			}
			want, st.content = data, data
		}
		switch c.Kind {
		case audit.Created:
			if !now.exists {
				f.Action = "none" // already gone
			} else if !now.matches(leftSum, leftLink) {
				f.Conflict = changedSince(c.Path)
			}
		case audit.Modified, audit.Deleted:
			wantSum, wantLink := c.Version, c.Link
			if wantLink != "" {
				wantSum = ""
			}
			if now.exists && now.matches(wantSum, wantLink) {
				f.Action = "none" // already as it was
			} else if !now.matches(leftSum, leftLink) {
				f.Conflict = changedSince(c.Path)
			}
		case audit.Moved:
			from, err := s.stateAt(ev.User, c.From)
			switch {
			case err != nil:
				f.Conflict = errs.As(err).Msg
			case !now.exists && from.exists && from.matches(c.Version, c.Link):
				f.Action = "none" // already back
			case !now.matches(leftSum, leftLink):
				f.Conflict = changedSince(c.Path)
			case from.exists:
				f.Conflict = fmt.Sprintf("Something is at %s again, so Corral will not move %s back onto it.", c.From, c.Path)
			}
		}
		f.SizeAfter = int64(len(want))
		if c.Kind == audit.Created {
			f.SizeAfter = 0
		}
		if now.data != nil && (want != nil || c.Kind == audit.Created) && fsbox.IsText(now.data) && (want == nil || fsbox.IsText(want)) {
			name := strings.TrimPrefix(c.Path, "/")
			d := patch.Diff(name, name, now.data, want)
			if len(d) > maxPreviewDiff {
				d = d[:strings.LastIndexByte(d[:maxPreviewDiff], '\n')+1] + "…\n"
			}
			f.Diff = d
		} else if now.data != nil || want != nil {
			f.Binary = !(now.data == nil || fsbox.IsText(now.data)) || !(want == nil || fsbox.IsText(want))
		}
	}
	return steps
}

// planFolder plans undoing a folder's change c (Dir): a folder the event
// made is removed if it is still an empty folder (or holds only folders
// the same event made, removed before it); a folder an undo removed is
// made again unless something else is there now.
func (s *Service) planFolder(ev audit.Event, c audit.Change, now state, f *UndoFile) {
	if c.Kind != audit.Created {
		switch {
		case !now.exists:
			f.Action = "restore"
		case now.dir:
			f.Action = "none"
		default:
			f.Action, f.Conflict = "restore", fmt.Sprintf("Something other than a folder is at %s now, so Corral will not put the folder back.", c.Path)
		}
		return
	}
	f.Action = "remove"
	switch {
	case !now.exists:
		f.Action = "none"
		return
	case !now.dir:
		f.Conflict = changedSince(c.Path)
		return
	}
	// What the event made goes with the undo, newest first: the files it
	// created (still as it left them) before the folders holding them.
	made := map[string]bool{}
	created := map[string]audit.Change{}
	for _, o := range ev.Changes {
		switch {
		case o.Dir && o.Kind == audit.Created:
			made[o.Path] = true
		case o.Kind == audit.Created:
			created[o.Path] = o
		}
	}
	budget := 10_000
	if !s.folderGoes(ev.User, c.Path, made, created, &budget) {
		f.Conflict = fmt.Sprintf("%s holds files now, so Corral will not remove it.", c.Path)
	}
}

// folderGoes reports whether the folder vis holds only what the undo
// removes before it: folders the event made (holding the same, all the
// way down) and files it created, still as it left them; budget bounds
// the entries looked at.
func (s *Service) folderGoes(scope, vis string, made map[string]bool, created map[string]audit.Change, budget *int) bool {
	d, rel, done, err := s.box.OwnerDir(scope, vis)
	if err != nil {
		return false
	}
	entries, truncated, err := d.List(rel, 1, max(1, min(*budget, fsbox.MaxEntries)))
	done()
	if err != nil || truncated {
		return false
	}
	for _, e := range entries {
		if *budget--; *budget < 0 {
			return false
		}
		if e.Type == "dir" {
			if !made[e.Path] || !s.folderGoes(scope, e.Path, made, created, budget) {
				return false
			}
			continue
		}
		o, ok := created[e.Path]
		if !ok {
			return false
		}
		if now, err := s.stateAt(scope, e.Path); err != nil || !now.matches(o.After, o.Link) {
			return false
		}
	}
	return true
}

// UndoPreview answers undo.preview: what undoing the event would do.
func (s *Service) UndoPreview(ctx context.Context, c sandbox.Caller, a UndoArgs) (UndoResult, error) {
	if err := s.needOwner(c); err != nil {
		return UndoResult{}, err
	}
	ev, err := s.event(ctx, a.EventID)
	if err != nil {
		return UndoResult{}, err
	}
	if ev, err = onlyFolder(ev, a.Folder); err != nil {
		return UndoResult{}, err
	}
	r := undoResult(ev, s.planUndo(ev))
	r.Folders = s.missingFolders(ev.User, r.Files)
	return r, nil
}

// onlyFolder keeps the changes of ev at folder or under it (all of them
// when folder is ""); none there is invalid_params.
func onlyFolder(ev audit.Event, folder string) (audit.Event, error) {
	if folder == "" {
		return ev, nil
	}
	f := strings.TrimSuffix(folder, "/")
	under := func(p string) bool { return p != "" && (f == "" || paths.Within(p, f)) }
	var keep []audit.Change
	for _, c := range ev.Changes {
		if under(c.Path) || under(c.From) {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return ev, errs.New(errs.InvalidParams, folder, "Event %d changed nothing in %s.", ev.ID, folder)
	}
	ev.Changes = keep
	return ev, nil
}

// maxFolderChecks bounds the folders missingFolders looks at on disk.
const maxFolderChecks = 256

// missingFolders lists the folders the deleted files of a plan were in
// that are gone now, the topmost of each, with the files undoing puts
// back under it, in the order the plan names them. A folder Corral
// cannot look at counts as there (it is not offered).
func (s *Service) missingFolders(scope string, files []UndoFile) []UndoFolder {
	there := map[string]bool{}
	var out []UndoFolder
	at := map[string]int{}
	checks := 0
	for _, f := range files {
		if f.Kind != string(audit.Deleted) || f.Conflict != "" || f.Action != "restore" {
			continue
		}
		top := ""
		for _, d := range ancestors(f.Path) {
			ok, seen := there[d]
			if !seen {
				if checks >= maxFolderChecks {
					break
				}
				checks++
				st, err := s.stateAt(scope, d)
				ok = err != nil || st.exists
				there[d] = ok
			}
			if !ok {
				top = d
				break
			}
		}
		if top == "" {
			continue
		}
		if i, ok := at[top]; ok {
			out[i].Files++
			continue
		}
		at[top] = len(out)
		out = append(out, UndoFolder{Path: top, Files: 1})
	}
	return out
}

// ancestors lists the folders above an agent-visible path, the topmost
// first ("a/b/c" gives "a", "a/b"; "/share/x/y" gives "/share",
// "/share/x").
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

func undoResult(ev audit.Event, steps []*undoStep) UndoResult {
	r := UndoResult{EventID: ev.ID, Op: ev.Op, Client: ev.Client, User: ev.User, Time: ev.Time, Target: ev.Target, Files: []UndoFile{}}
	for _, st := range steps {
		r.Files = append(r.Files, st.file)
		if st.file.Conflict != "" {
			r.Conflicts++
		}
	}
	return r
}

// UndoApply answers undo.apply: it puts back what the event changed,
// unless a file changed again since (a conflict: nothing is written,
// unless SkipConflicts).
func (s *Service) UndoApply(ctx context.Context, c sandbox.Caller, a UndoArgs) (UndoResult, error) {
	if err := s.needOwner(c); err != nil {
		return UndoResult{}, err
	}
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	ev, err := s.event(ctx, a.EventID)
	if err != nil {
		return UndoResult{}, err
	}
	if len(ev.Changes) == 0 {
		return UndoResult{}, errs.New(errs.InvalidParams, "", "Event %d changed no files, so there is nothing to undo.", ev.ID)
	}
	if ev, err = onlyFolder(ev, a.Folder); err != nil {
		return UndoResult{}, err
	}
	steps := s.planUndo(ev)
	res := undoResult(ev, steps)
	if res.Conflicts > 0 && !a.SkipConflicts {
		return res, errs.New(errs.Conflict, "", "%d of the files event %d changed have changed again since; nothing was undone. Look at undo.preview, or undo with skip_conflicts to leave those files as they are.", res.Conflicts, ev.ID)
	}
	o := s.box.Started(ctx, audit.Event{Client: c.Client, Op: "undo.apply", User: ev.User,
		Target: fmt.Sprintf("event %d", ev.ID), Decision: audit.Allow, DecidedBy: audit.ByOwner}, "")
	o.Event().Detail = fmt.Sprintf("undo of %s by %s", ev.Op, ev.Client)
	if a.Folder != "" {
		o.Event().Detail += " (only " + a.Folder + ")"
	}
	err = s.applyJournaled(o, steps)
	res.Applied = err == nil
	if err := o.End(err); err != nil {
		return res, err
	}
	res.UndoEvent = o.Event().ID
	return res, nil
}

// applyJournaled is applySteps for the owner's undo and restore, as a
// journaled unit (core/sandbox's journal.go): the changes the steps will
// make, what they replace kept first, are committed on o's event as
// pending before any is made, so a crash half-way leaves an unfinished
// event Recover rolls back, not a half-done undo nobody recorded.
func (s *Service) applyJournaled(o *sandbox.Op, steps []*undoStep) error {
	var planned []audit.Change
	for _, st := range steps {
		if st.file.Conflict != "" || st.file.Action == "none" {
			continue
		}
		d, rel, done, err := s.box.OwnerDir(st.scope, st.change.Path)
		if err != nil {
			return err
		}
		before, err := s.box.Priors(d, rel)
		done()
		if err != nil {
			return err
		}
		planned = append(planned, stepChanges(st, before)...)
	}
	if len(planned) > 0 {
		if err := o.Intend(planned); err != nil {
			return err
		}
	}
	return s.applySteps(o, steps)
}

// stepChanges is what carrying out st changes, given what its path holds
// before (before).
func stepChanges(st *undoStep, before []sandbox.Prior) []audit.Change {
	c := st.change
	switch {
	case c.Dir && c.Kind == audit.Created:
		return []audit.Change{{Path: c.Path, Kind: audit.Deleted, Dir: true, Mode: c.Mode}}
	case c.Dir:
		return []audit.Change{{Path: c.Path, Kind: audit.Created, Dir: true, Mode: c.Mode}}
	case c.Kind == audit.Created:
		return sandbox.Removed(before)
	case c.Kind == audit.Modified || c.Kind == audit.Deleted:
		return []audit.Change{restoredChange(before, c.Path, st.content, c.Link, c.Mode)}
	case c.Kind == audit.Moved:
		mc := audit.Change{Path: c.From, From: c.Path, Kind: audit.Moved, SizeAfter: int64(len(st.content)), After: versions.Sum(st.content), Mode: c.Mode, Link: c.Link}
		if len(before) == 1 {
			mc.SizeBefore, mc.Version, mc.NotKept = before[0].Size, before[0].Version, before[0].NotKept
		}
		return []audit.Change{mc}
	}
	return nil
}

// applySteps carries out the planned steps without conflicts, keeping
// versions of what they replace, and records the changes on o.
func (s *Service) applySteps(o *sandbox.Op, steps []*undoStep) error {
	for _, st := range steps {
		if st.file.Conflict != "" || st.file.Action == "none" {
			continue
		}
		c := st.change
		d, rel, done, err := s.box.OwnerDir(st.scope, c.Path)
		if err != nil {
			return err
		}
		before, err := s.box.Priors(d, rel)
		if err != nil {
			done()
			return err
		}
		switch {
		case c.Dir && c.Kind == audit.Created:
			// Only this folder: the folders above it that the event made
			// are changes of their own, and the ones it did not make stay.
			err = d.RemoveEntry(rel)
		case c.Dir:
			err = d.Mkdir(rel)
		case c.Kind == audit.Created:
			if err = d.RemoveEntry(rel); err == nil {
				removeEmptyParents(d, rel)
			}
		case c.Kind == audit.Modified || c.Kind == audit.Deleted:
			if c.Link != "" {
				err = d.PutLink(rel, c.Link)
			} else {
				err = d.PutFile(rel, st.content, fs.FileMode(c.Mode))
			}
		case c.Kind == audit.Moved:
			fd, frel, fdone, ferr := s.box.OwnerDir(st.scope, c.From)
			if ferr != nil {
				done()
				return ferr
			}
			if c.Link != "" {
				err = fd.PutLink(frel, c.Link)
			} else {
				err = fd.PutFile(frel, st.content, fs.FileMode(c.Mode))
			}
			if err == nil {
				if err = d.RemoveEntry(rel); err == nil {
					removeEmptyParents(d, rel)
				}
			}
			fdone()
		}
		done()
		if err != nil {
			return err
		}
		o.Event().Changes = append(o.Event().Changes, stepChanges(st, before)...)
		killpoint.Here("undo.change")
	}
	return nil
}

// removeEmptyParents removes the folders above rel that the removal left
// empty (a move or a creation made them), up to the first that is not.
func removeEmptyParents(d fsbox.Dir, rel string) {
	for p := path.Dir(rel); p != "." && p != "/"; p = path.Dir(p) {
		if d.RemoveEntry(p) != nil {
			return
		}
	}
}

// restoredChange is the change of putting content (or a link) back at
// vis, given what was there.
func restoredChange(before []sandbox.Prior, vis string, content []byte, link string, mode uint32) audit.Change {
	c := audit.Change{Path: vis, Kind: audit.Created, SizeAfter: int64(len(content)), Mode: mode, Link: link}
	if link == "" {
		c.After = versions.Sum(content)
	}
	for _, p := range before {
		if p.Path == vis && !p.Dir {
			c.Kind, c.SizeBefore, c.Version, c.NotKept = audit.Modified, p.Size, p.Version, p.NotKept
		}
	}
	return c
}

// RestoreArgs are version.restore's parameters.
type RestoreArgs struct {
	Context *sandbox.Context
	Path    string
	Version string
}

// Restore answers version.restore: the file at path gets the content of
// a kept version, whatever it holds now (what it held is kept in turn).
func (s *Service) Restore(ctx context.Context, c sandbox.Caller, a RestoreArgs) (UndoResult, error) {
	if err := s.needOwner(c); err != nil {
		return UndoResult{}, err
	}
	scope, err := s.box.ScopeFor(c, a.Context)
	if err != nil {
		return UndoResult{}, err
	}
	t, err := s.resolve(scope, a.Path)
	if err != nil {
		return UndoResult{}, err
	}
	data, err := s.versions.Read(a.Version, s.versions.MaxFile())
	if err != nil {
		return UndoResult{}, err
	}
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	now, err := s.stateAt(scope, t.Visible)
	if err != nil {
		return UndoResult{}, err
	}
	if now.dir {
		return UndoResult{}, errs.New(errs.IsDirectory, t.Visible, "%s is a folder now; move it away first.", t.Visible)
	}
	// Only a version of this path: a kept version is anyone's content,
	// and written over another path (a host file outside every fence,
	// another file of the scope) it would be a write nobody decided on.
	mode, ok := uint32(0), false
	p, err := s.History(ctx, c, HistoryArgs{Context: a.Context, Path: t.Visible, Limit: 1000})
	if err != nil {
		return UndoResult{}, err
	}
	for _, v := range p.Versions {
		if v.Version == a.Version {
			mode, ok = v.Mode, true
			break
		}
	}
	if !ok {
		return UndoResult{}, errs.New(errs.InvalidParams, t.Visible, "That version was not kept for %s; versions.list names the ones that were.", t.Visible)
	}
	st := &undoStep{scope: scope, content: data, change: audit.Change{Path: t.Visible, Kind: audit.Modified, Version: a.Version, Mode: mode},
		file: UndoFile{Path: t.Visible, Action: "restore", Kind: string(audit.Modified), SizeNow: now.size, SizeAfter: int64(len(data))}}
	o := s.box.Started(ctx, audit.Event{Client: c.Client, Op: "version.restore", User: scope,
		Target: t.Visible, Decision: audit.Allow, DecidedBy: audit.ByOwner, Detail: "version " + a.Version[:12]}, "")
	err = s.applyJournaled(o, []*undoStep{st})
	res := UndoResult{Op: "version.restore", Client: c.Client, Files: []UndoFile{st.file}, Applied: err == nil}
	if err := o.End(err); err != nil {
		return res, err
	}
	res.UndoEvent = o.Event().ID
	return res, nil
}

// HistoryArgs are versions.list's parameters.
type HistoryArgs struct {
	Context *sandbox.Context
	Path    string
	Limit   int
}

// Version is one kept content of a path: what it held before event
// EventID changed it.
type Version struct {
	EventID int64
	Time    time.Time
	Client  string
	Op      string
	Kind    string
	Version string // "" when nothing was there or it was not kept
	Size    int64
	Mode    uint32
	NotKept string
	Kept    bool // the content is still in the store
}

// HistoryResult answers versions.list.
type HistoryResult struct {
	Path     string
	Versions []Version
}

// History answers versions.list: the changes of a path, newest first,
// each with the content it had before.
func (s *Service) History(ctx context.Context, c sandbox.Caller, a HistoryArgs) (HistoryResult, error) {
	if err := s.needOwner(c); err != nil {
		return HistoryResult{}, err
	}
	scope, err := s.box.ScopeFor(c, a.Context)
	if err != nil {
		return HistoryResult{}, err
	}
	t, err := s.resolve(scope, a.Path)
	if err != nil {
		return HistoryResult{}, err
	}
	limit := a.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	res := HistoryResult{Path: t.Visible, Versions: []Version{}}
	f := audit.Filter{User: scope, Path: t.Visible, Limit: 200}
	for len(res.Versions) < limit {
		p, err := s.history.Query(ctx, f)
		if err != nil {
			return res, errs.Wrap(err, errs.IO, "", "Corral could not read its audit log.")
		}
		for _, ev := range p.Events {
			for _, ch := range ev.Changes {
				if ch.Path != t.Visible && ch.From != t.Visible {
					continue
				}
				v := Version{EventID: ev.ID, Time: ev.Time, Client: ev.Client, Op: ev.Op, Kind: string(ch.Kind),
					Version: ch.Version, Size: ch.SizeBefore, Mode: ch.Mode, NotKept: ch.NotKept}
				v.Kept = v.Version != "" && s.versions.Has(v.Version)
				res.Versions = append(res.Versions, v)
			}
		}
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
	}
	if len(res.Versions) > limit {
		res.Versions = res.Versions[:limit]
	}
	return res, nil
}

// ChangesArgs are changes.get's parameters.
type ChangesArgs struct {
	EventID int64
}

// ChangesResult answers changes.get.
type ChangesResult struct {
	Event   audit.Event
	Changes []audit.Change
}

// Changes answers changes.get: what one event changed.
func (s *Service) Changes(ctx context.Context, c sandbox.Caller, a ChangesArgs) (ChangesResult, error) {
	if err := s.needOwner(c); err != nil {
		return ChangesResult{}, err
	}
	ev, err := s.event(ctx, a.EventID)
	if err != nil {
		return ChangesResult{}, err
	}
	cs := ev.Changes
	if cs == nil {
		cs = []audit.Change{}
	}
	return ChangesResult{Event: ev, Changes: cs}, nil
}

// ownerSurface reports whether client is one of the owner's own
// surfaces (the owner's key, the dashboard, a paired device): not an
// agent.
func ownerSurface(client string) bool {
	return slices.Contains(audit.OwnerClients, client) || strings.HasPrefix(client, audit.DevicePrefix)
}

// UndoClientArgs are undo.client's parameters.
type UndoClientArgs struct {
	// Client is the agent; "" is every agent (not the owner's own
	// surfaces).
	Client        string
	Since         time.Time
	Until         time.Time // exclusive; zero: up to now
	DryRun        bool
	SkipConflicts bool
}

// UndoClientResult answers undo.client.
type UndoClientResult struct {
	Events    []UndoResult // newest first, the order they are undone in
	Conflicts int
	Applied   bool
	DryRun    bool
}

// maxUndoEvents bounds undo.client.
const maxUndoEvents = 1000

// UndoClient answers undo.client: every change one client made since a
// time (and before until, when given), undone newest first. With dry_run it only previews. Without
// skip_conflicts, a conflict in any event stops before anything is
// written; a later event's undo is checked after the newer ones are
// undone, so a file changed twice goes back to what it held first.
func (s *Service) UndoClient(ctx context.Context, c sandbox.Caller, a UndoClientArgs) (UndoClientResult, error) {
	res := UndoClientResult{Events: []UndoResult{}, DryRun: a.DryRun}
	if err := s.needOwner(c); err != nil {
		return res, err
	}
	var evs []audit.Event
	f := audit.Filter{Client: a.Client, Since: a.Since, Until: a.Until, Changed: true, Limit: 1000}
	for {
		p, err := s.history.Query(ctx, f)
		if err != nil {
			return res, errs.Wrap(err, errs.IO, "", "Corral could not read its audit log.")
		}
		evs = append(evs, p.Events...)
		if p.NextCursor == "" || len(evs) >= maxUndoEvents {
			break
		}
		f.Cursor = p.NextCursor
	}
	if len(evs) > maxUndoEvents {
		who := a.Client
		if who == "" {
			who = "The agents"
		}
		return res, errs.New(errs.TooLarge, "", "%s changed files in more than %d calls since then; choose a later time.", who, maxUndoEvents)
	}
	evs = slices.DeleteFunc(evs, func(e audit.Event) bool {
		return e.Decision != audit.Allow || strings.HasPrefix(e.Op, "undo.") || (a.Client == "" && ownerSurface(e.Client))
	})
	if a.DryRun || !a.SkipConflicts {
		// A preview of each event against the disk as it is now: a file
		// changed by several of the events shows as a conflict in all but
		// the newest, which undoing in order resolves.
		touched := map[string]bool{}
		for _, ev := range evs {
			r := undoResult(ev, s.planUndo(ev))
			if a.DryRun {
				r.Folders = s.missingFolders(ev.User, r.Files)
			}
			for i := range r.Files {
				f := &r.Files[i]
				key := ev.User + "\x00" + f.Path
				if f.Conflict != "" && touched[key] {
					f.Conflict = "" // changed by a newer event of the same client, undone first
					r.Conflicts--
				}
				touched[key] = true
				if f.From != "" {
					touched[ev.User+"\x00"+f.From] = true
				}
			}
			res.Events = append(res.Events, r)
			res.Conflicts += r.Conflicts
		}
		if a.DryRun {
			return res, nil
		}
		if res.Conflicts > 0 {
			return res, errs.New(errs.Conflict, "", "%d files that %s changed have been changed again by someone else since; nothing was undone. Undo with skip_conflicts to leave those files as they are.", res.Conflicts, a.Client)
		}
		res.Events, res.Conflicts = []UndoResult{}, 0
	}
	for _, ev := range evs {
		r, err := s.UndoApply(ctx, c, UndoArgs{EventID: ev.ID, SkipConflicts: a.SkipConflicts})
		res.Events = append(res.Events, r)
		res.Conflicts += r.Conflicts
		if err != nil && errs.KindOf(err) != errs.InvalidParams {
			return res, err
		}
	}
	res.Applied = true
	return res, nil
}

// VersionsInfo answers versions.usage: the store's size and budget.
func (s *Service) VersionsInfo(ctx context.Context, c sandbox.Caller, _ struct{}) (versions.Usage, error) {
	if err := s.needOwner(c); err != nil {
		return versions.Usage{}, err
	}
	return s.versions.Usage(), nil
}
