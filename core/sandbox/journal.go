package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/paths"
)

// tempPrefix starts the names of Corral's temporary files in the owner's
// folders (fsbox's, and a command's copies across file systems).
const tempPrefix = ".corral-tmp-"

// The journal. Every change to the owner's folders is a recorded,
// recoverable unit, as in a journaling file system:
//
//  1. What the change replaces or deletes is kept in the version store
//     (priors; Op.Keep for a patch in core/applypatch; a command's apply
//     plan in core/commands). If it cannot be kept, nothing changes and
//     the answer says so.
//  2. The intent is committed to the audit log (op.intend): the
//     operation's event, its Detail ending "pending", with the changes it
//     will make, each naming the kept old content (Version) and the new
//     one (After). A command's event, recorded "running" before the
//     command started, is completed that way once the command has ended
//     and before its changes are applied.
//  3. The change is made: a file is replaced by a temporary file renamed
//     into place (an append too), a patch's files are staged then renamed
//     (core/applypatch, under Op.Change),
//     a command's layer is swapped in file by file.
//  4. The event is completed (op.end), and only then is the answer sent.
//
// A crash between 2 and 4 leaves an unfinished event. Recover, run at
// start-up before Corral serves, completes every one with one rule: ROLL
// BACK. Each change the event lists is checked against the disk, newest
// event first: a path that holds what the change left there gets back
// what it held before (from the version store; a created file or folder
// is removed, a folder only while empty); a path that still holds the
// old content was never changed. The agent was never answered, so for it
// the operation did not happen, and now it did not. A change whose path
// holds something else (changed again by a later operation that did
// answer) is left as it is and stays listed on the event, so the owner
// can see and undo it. The event is then completed as an error
// ("interrupted"): no event stays "running" or "pending". Recover also
// removes Corral's temporary files (exactly the names it gives them, see
// isCorralTemp) from every folder it
// manages (the sandbox base, every readwrite root, and the folders outside
// the fence that an unfinished event changed) and the layers of commands
// that were running.
//
// Not guaranteed: durability across a power cut (the audit log and the
// version store are not synced on every change, see store and
// core/versions); a change whose old content was not kept (too large,
// hard-linked) cannot be rolled back and stays listed; empty folders
// made for a new file's parents may stay behind after a roll back; the
// owner's undo (undo.apply, version.restore) is a unit too
// (applyJournaled), but the owner's undo.client is one unit per event it
// undoes; a file operation that writes a file between a command's
// plan and its apply is kept on the command's event once the apply has
// swapped it out, but a crash in that instant rolls the file back to what
// the plan kept, the older content.

// Recovery is what Recover found and did at start-up.
type Recovery struct {
	At time.Time
	// Events is how many unfinished events were completed as
	// interrupted; Commands how many of them were commands.
	Events   int
	Commands int
	// RolledBack is how many changes were put back to what they held
	// before; Left how many were left as they are (changed again since,
	// or their old content was not kept).
	RolledBack int
	Left       int
	// TempFiles is how many of Corral's temporary files were removed.
	TempFiles int
}

// recovered holds the last Recovery, for session.info.
type recovered struct {
	mu sync.Mutex
	r  *Recovery
}

// Recovered returns what the last Recover did, or nil before it ran.
func (s *Sandbox) Recovered() *Recovery {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if s.rec.r == nil {
		return nil
	}
	r := *s.rec.r
	return &r
}

// maxSweep bounds the entries the sweep for temporary files visits.
const maxSweep = 2_000_000

// RollBack puts back what it can of the changes of ev, an event a crash
// left unfinished, as the operation o (core/undo's Service.RollBack, the
// owner's undo), and returns the changes it left as they are, in the
// order ev lists them, and how many it put back.
type RollBack func(o *Op, ev audit.Event) (left []audit.Change, put int)

// Recover finishes what a crash interrupted (see the journal above),
// putting changes back with rb (nil: every change is left as it is and
// listed). It must run before any agent operation: at start-up, before
// serving.
func (s *Sandbox) Recover(ctx context.Context, rb RollBack) (Recovery, error) {
	r := Recovery{At: s.now().UTC()}
	defer func() {
		s.rec.mu.Lock()
		s.rec.r = &r
		s.rec.mu.Unlock()
	}()
	var ferr error
	u, ok1 := s.audit.(audit.Unfinisher)
	c, ok2 := s.audit.(audit.Completer)
	if ok1 && ok2 {
		ferr = s.finish(ctx, u, c, &r, rb)
	}
	if s.keeping() {
		execbox.RemoveLayers(filepath.Join(s.versions.Dir(), "run"))
	}
	dirs := []string{s.layout.Base}
	for _, root := range s.layout.Roots {
		if root.Access == paths.ReadWrite {
			dirs = append(dirs, root.Path)
		}
	}
	left := maxSweep
	for _, d := range dirs {
		root, err := os.OpenRoot(d)
		if err != nil {
			continue
		}
		r.TempFiles += sweepTemps(root, ".", &left, true)
		root.Close()
	}
	if r.Events > 0 || r.TempFiles > 0 {
		s.log.Warn("recovered from an interrupted run", "events", r.Events, "commands", r.Commands,
			"rolled_back", r.RolledBack, "left", r.Left, "temp_files", r.TempFiles)
	}
	return r, ferr
}

// finish completes every unfinished event, newest first.
func (s *Sandbox) finish(ctx context.Context, u audit.Unfinisher, c audit.Completer, r *Recovery, rb RollBack) error {
	for range 1000 {
		evs, err := u.Unfinished(ctx, 1000)
		if err != nil {
			return fmt.Errorf("recover: list unfinished events: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, ev := range evs {
			done := s.rollBack(ctx, ev, r, rb)
			if err := c.Complete(context.WithoutCancel(ctx), done); err != nil {
				return fmt.Errorf("recover: complete event %d: %w", ev.ID, err)
			}
		}
	}
	return errors.New("recover: unfinished events keep coming")
}

// rollBack puts back what the unfinished event ev changed and returns the
// event completed as interrupted.
func (s *Sandbox) rollBack(ctx context.Context, ev audit.Event, r *Recovery, rb RollBack) audit.Event {
	r.Events++
	command := strings.HasSuffix(ev.Detail, audit.Running)
	if command {
		r.Commands++
	}
	d := strings.TrimSuffix(strings.TrimSuffix(ev.Detail, audit.Running), audit.Pending)
	d = strings.TrimSuffix(strings.TrimSuffix(d, " "), ";")
	r.TempFiles += s.sweepOutside(ev)
	var left []audit.Change
	put := 0
	if len(ev.Changes) > 0 && s.keeping() && rb != nil {
		left, put = rb(s.Started(ctx, audit.Event{Client: ev.Client, User: ev.User, Op: "recover"}, ""), ev)
	} else {
		left = ev.Changes
	}
	r.RolledBack += put
	r.Left += len(left)
	ev.Decision = audit.Error
	ev.Detail = appendDetail(d, "interrupted")
	if put > 0 {
		ev.Detail = appendDetail(ev.Detail, fmt.Sprintf("%d changes put back", put))
	}
	ev.Changes = left
	what := "this operation"
	if command {
		what = "the command"
	}
	msg := fmt.Sprintf("Corral stopped before %s ended (it crashed or was killed); at its next start it put back what %s had changed.", what, what)
	if len(left) > 0 {
		msg = fmt.Sprintf("Corral stopped before %s ended (it crashed or was killed); %d of its changes could not be put back and are listed here.", what, len(left))
	}
	ev.Error = string(errs.IO) + ": " + msg
	return ev
}

// sweepOutside removes Corral's temporary files from the folders outside
// the fence (approved by the owner) that ev changed: the sweep of the
// managed folders does not reach them.
func (s *Sandbox) sweepOutside(ev audit.Event) int {
	n := 0
	seen := map[string]bool{}
	for _, c := range ev.Changes {
		for _, p := range []string{c.Path, c.From} {
			t, err := s.layout.Resolve(ev.User, p)
			if p == "" || err != nil || t.Area != paths.Outside {
				continue
			}
			dir := filepath.Dir(paths.Resolved(filepath.Join(paths.Resolved(t.Dir), t.Rel)))
			if seen[dir] || s.isPrivate(dir) || systemFolder(dir) {
				continue
			}
			seen[dir] = true
			root, err := os.OpenRoot(dir)
			if err != nil {
				continue
			}
			left := maxSweep
			n += sweepTemps(root, ".", &left, false)
			root.Close()
		}
	}
	return n
}

// isCorralTemp reports whether name is exactly one of the names Corral
// gives its temporary files: fsbox's ".corral-tmp-" and 16 lowercase hex
// digits, or a command's copy ".corral-tmp-cmd-<pid>-<n>". Any other name
// that merely starts with ".corral-tmp-" (the owner's own file in a
// readwrite root, or one an agent's command made) is not Corral's, and
// the sweep leaves it alone: removing it would lose a file unrecorded.
func isCorralTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok {
		return false
	}
	if cmd, ok := strings.CutPrefix(rest, "cmd-"); ok {
		pid, n, ok := strings.Cut(cmd, "-")
		return ok && digits(pid) && digits(n)
	}
	if len(rest) != 16 {
		return false
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CommandTemp is the name of the n-th temporary file a command's change
// is copied through where its layer and the folder are on different file
// systems (core/commands): a name isCorralTemp knows.
func CommandTemp(n int64) string {
	return fmt.Sprintf("%scmd-%d-%d", tempPrefix, os.Getpid(), n)
}

// digits reports whether s is 1 to 19 ASCII digits.
func digits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sweepTemps removes Corral's temporary files below rel of root, visiting
// at most *left entries, without following symlinks (in rel itself only
// unless deep), and returns how many it removed.
func sweepTemps(root *os.Root, rel string, left *int, deep bool) int {
	f, err := root.Open(rel)
	if err != nil {
		return 0
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if *left <= 0 {
			return n
		}
		*left--
		p := path.Join(rel, e.Name())
		switch {
		case isCorralTemp(e.Name()) && e.Type()&fs.ModeType == 0:
			if root.Remove(p) == nil {
				n++
			}
		case e.IsDir() && deep:
			n += sweepTemps(root, p, left, deep)
		}
	}
	return n
}
