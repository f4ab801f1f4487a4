package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/sandbox"
)

// Versions for commands. A command runs with an overlay on each writable
// folder (execbox Spec.LayerDir): it sees the real folder, but what it
// writes lands in an upper layer in versions/run/ of Corral's data folder.
// When it has ended, applyLayers walks only the upper layers — the cost
// follows what the command changed, never the size of the folders — and
// puts each change into the real folder, keeping what it replaces:
//
//   - a new or changed file or symlink is swapped into place with
//     renameat2(RENAME_EXCHANGE) (RENAME_NOREPLACE where nothing was
//     there), so what it replaced is exactly what is kept, even if a file
//     operation wrote there a moment before; a file whose content and
//     mode did not change (touched, or opened for writing) is left alone;
//   - a whiteout deletes what is there, after keeping it;
//   - an opaque folder replaced the folder of that name: what the real
//     folder holds that the layer does not is deleted, after keeping it.
//
// Concurrent changes: commands apply one at a time (applyMu) in the order
// they end, so of two commands that changed the same file the later one
// to end wins and the earlier one's content is a version on the later
// one's event; a file operation during a command is not seen by the
// command if it had already copied the file up, and is then replaced by
// the command's result when the command ends, and kept as a version.
// Where the layers and the real folder are on different file systems the
// swap is a copy and a rename instead, and a file operation in the same
// instant can lose its write. Special files a command makes (FIFOs,
// sockets, devices) are not carried over.

var layerSeq atomic.Int64

// layerDir is a fresh folder for one command's layers, in the folder
// sandbox.Recover empties at start-up.
func (s *Service) layerDir() string {
	return filepath.Join(s.box.Versions().Dir(), "run", strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(layerSeq.Add(1), 10))
}

// overlayProbeTimeout bounds the overlay probe; overlayRetry is how long
// after a refusal CommandVersions probes again (the refusal may have been
// passing), so commands are not left unrecorded until a restart.
var overlayProbeTimeout = time.Minute // a variable for tests

const overlayRetry = 5 * time.Minute

// CommandVersions reports whether what commands change is recorded, and
// otherwise why not. The first call checks that the kernel allows the
// overlay; after a refusal, a call overlayRetry later checks again.
func (s *Service) CommandVersions(ctx context.Context) (bool, string) {
	vs := s.box.Versions()
	if vs == nil {
		return false, "Corral keeps no versions here."
	}
	ec := s.cfg
	if ec.Runner == nil {
		return false, "Commands are unavailable."
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	run := filepath.Join(vs.Dir(), "run")
	// Detached from the call that came first: an agent that cancels it
	// (closes its connection) must not kill the probe, which would
	// disable recording.
	probe := func() (context.Context, context.CancelFunc) {
		s.probed = s.box.Now()
		return context.WithTimeout(context.WithoutCancel(ctx), overlayProbeTimeout)
	}
	switch ok, _ := ec.Runner.Overlay(); {
	case s.probed.IsZero() && ok:
		execbox.RemoveLayers(run) // what a crash left
		pctx, cancel := probe()
		_ = ec.Runner.ProbeOverlay(pctx, run)
		cancel()
	case s.probed.IsZero():
		s.probed = s.box.Now()
	case !ok && s.box.Now().Sub(s.probed) >= overlayRetry:
		pctx, cancel := probe()
		if ec.Runner.RetryOverlay(pctx, run) {
			s.box.Logger().Info("overlays work again: commands' changes are recorded")
		}
		cancel()
	}
	return ec.Runner.Overlay()
}

// FileChange is one file a command changed, as command.run reports it.
type FileChange struct {
	Path string
	Kind audit.ChangeKind
}

// applier applies one layer to its real folder, in two passes: plan
// walks the layer and keeps, in the version store, everything the
// command's changes will replace or delete, listing the steps; once the
// event holds their intent (Op.Intend), apply carries the steps out.
type applier struct {
	s      *Service
	o      *sandbox.Op // the command's: what is replaced is kept in its caller's share
	upper  *os.Root
	real   fsbox.Dir
	old    fsbox.Dir // the upper root seen as the real folder: where swapped-out entries are
	steps  []applyStep
	failed []string
	err    error  // a previous content could not be kept: nothing is applied
	errAt  string // the visible path err is about
}

// stepKind is what one step of an apply does.
type stepKind int

const (
	stepRemove stepKind = iota // delete what is at rel (kept first)
	stepMkdir                  // make the folder rel
	stepChmod                  // give the existing folder rel the layer's mode
	stepFile                   // put the layer's file or symlink rel in place
)

// applyStep is one planned step and the changes it makes.
type applyStep struct {
	kind    stepKind
	rel     string
	fi      fs.FileInfo // the layer's entry
	changes []audit.Change
	nc      audit.Change    // stepFile: the new entry
	prior   []sandbox.Prior // stepFile: what it replaces, as kept
}

// applyLayers applies every layer (dirs maps a Layer's Host to its real
// folder) and returns the changes, in the order undo must reverse, and
// the paths it could not change. Before anything is changed, what the
// changes replace is kept (in the share of o's caller) and
// the intent is recorded on o's event; an error means that could not be
// done, and nothing was changed: the paths are then those planned so far
// and the one the error is about.
func (s *Service) applyLayers(o *sandbox.Op, layers []execbox.Layer, dirs map[string]fsbox.Dir) ([]audit.Change, []string, error) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	var as []*applier
	var failed []string
	defer func() {
		for _, a := range as {
			a.upper.Close()
		}
	}()
	for _, l := range layers {
		d, ok := dirs[l.Host]
		if !ok {
			failed = append(failed, l.Host)
			continue
		}
		up, err := os.OpenRoot(l.Upper)
		if err != nil {
			s.box.Logger().Error("command layer unreadable", "path", l.Upper, "err", err)
			failed = append(failed, d.Visible("."))
			continue
		}
		a := &applier{s: s, o: o, upper: up, real: d, old: fsbox.Dir{Root: up, Prefix: d.Prefix}}
		as = append(as, a)
		a.plan(".", false)
		if a.err != nil {
			return nil, plannedPaths(as), a.err
		}
	}
	var intent []audit.Change
	for _, a := range as {
		for _, st := range a.steps {
			intent = append(intent, st.changes...)
		}
	}
	if len(intent) > 0 {
		if err := o.Intend(intent); err != nil {
			return nil, plannedPaths(as), err
		}
	}
	var changes []audit.Change
	for _, a := range as {
		for i := range a.steps {
			changes = append(changes, a.apply(&a.steps[i])...)
		}
		failed = append(failed, a.failed...)
	}
	return changes, failed, nil
}

// plannedPaths are the paths the appliers planned to change, and the one
// an applier's error is about.
func plannedPaths(as []*applier) []string {
	var ps []string
	for _, a := range as {
		for _, st := range a.steps {
			for _, c := range st.changes {
				ps = append(ps, c.Path)
			}
		}
		if a.errAt != "" {
			ps = append(ps, a.errAt)
		}
	}
	return ps
}

// stop ends the plan: the previous content of rel could not be kept.
func (a *applier) stop(rel string, err error) {
	a.err, a.errAt = err, a.real.Visible(rel)
}

func (a *applier) fail(rel string, err error) {
	a.s.box.Logger().Error("command change not applied", "path", a.real.Visible(rel), "err", err)
	a.failed = append(a.failed, a.real.Visible(rel))
}

func isOpaque(root *os.Root, rel string) bool {
	f, err := root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4)
	n, err := fgetxattr(int(f.Fd()), "user.overlay.opaque", buf)
	return err == nil && string(buf[:n]) == "y"
}

// plan plans the upper folder rel; opaque: the real folder's entries the
// layer lacks were deleted.
func (a *applier) plan(rel string, opaque bool) {
	if a.err != nil {
		return
	}
	f, err := a.upper.Open(rel)
	if err != nil {
		a.fail(rel, err)
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		a.fail(rel, err)
		return
	}
	slices.SortFunc(ents, func(x, y fs.DirEntry) int { return cmpString(x.Name(), y.Name()) })
	if opaque {
		if rf, err := a.real.Root.Open(rel); err == nil {
			names, _ := rf.Readdirnames(-1)
			rf.Close()
			slices.Sort(names)
			for _, n := range names {
				if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == n }) {
					a.planRemove(path.Join(rel, n))
				}
			}
		}
	}
	for _, e := range ents {
		if a.err != nil {
			return
		}
		r := path.Join(rel, e.Name())
		fi, err := e.Info()
		if err != nil {
			a.fail(r, err)
			continue
		}
		switch {
		case execbox.IsWhiteout(fi):
			a.planRemove(r)
		case fi.IsDir():
			a.planMkdir(r, fi, opaque || isOpaque(a.upper, r))
		case fi.Mode().IsRegular(), fi.Mode()&fs.ModeSymlink != 0:
			a.planFile(r, fi)
		default:
			a.s.box.Logger().Info("special file a command made was not kept", "path", a.real.Visible(r))
		}
	}
}

func cmpString(x, y string) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// planRemove plans deleting rel of the real folder, keeping what it
// holds now.
func (a *applier) planRemove(rel string) {
	if _, err := a.real.Root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		return
	}
	st := applyStep{kind: stepRemove, rel: rel}
	ps, err := a.o.Priors(a.real, rel)
	switch {
	case err == nil:
		st.changes = sandbox.Removed(ps)
	case errs.As(err).Kind == errs.TooLarge:
		st.changes = []audit.Change{{Path: a.real.Visible(rel), Kind: audit.Deleted, NotKept: sandbox.NotKeptTooMany}}
	default:
		a.stop(rel, err)
		return
	}
	a.steps = append(a.steps, st)
}

// planMkdir plans the layer's folder rel: made when the real folder has
// none (a change, so an undo removes it again while it is empty).
func (a *applier) planMkdir(rel string, fi fs.FileInfo, opaque bool) {
	rfi, err := a.real.Root.Lstat(rel)
	switch {
	case err == nil && rfi.IsDir():
		if rfi.Mode().Perm() != fi.Mode().Perm() {
			a.steps = append(a.steps, applyStep{kind: stepChmod, rel: rel, fi: fi})
		}
	case err == nil:
		a.planRemove(rel)
		fallthrough
	default:
		a.steps = append(a.steps, applyStep{kind: stepMkdir, rel: rel, fi: fi,
			changes: []audit.Change{{Path: a.real.Visible(rel), Kind: audit.Created, Dir: true, Mode: uint32(fi.Mode().Perm())}}})
	}
	a.plan(rel, opaque)
}

// planFile plans putting the upper file or symlink rel in place, keeping
// what it replaces.
func (a *applier) planFile(rel string, fi fs.FileInfo) {
	vis := a.real.Visible(rel)
	nc := audit.Change{Path: vis, Kind: audit.Created, Mode: uint32(fi.Mode().Perm())}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := a.upper.Readlink(rel)
		if err != nil {
			a.fail(rel, err)
			return
		}
		nc.Link, nc.SizeAfter, nc.Mode = t, int64(len(t)), 0
	} else {
		sum, n, err := hashFile(a.upper, rel)
		if err != nil {
			a.fail(rel, err)
			return
		}
		nc.After, nc.SizeAfter = sum, n
	}
	st := applyStep{kind: stepFile, rel: rel, fi: fi, nc: nc, changes: []audit.Change{nc}}
	rfi, err := a.real.Root.Lstat(rel)
	switch {
	case err == nil && rfi.IsDir():
		a.planRemove(rel) // a file replaced a folder
	case err == nil:
		ps, err := a.o.Priors(a.real, rel)
		if err != nil {
			a.stop(rel, err)
			return
		}
		cs, same := replacedChanges(ps, nc)
		if same {
			return // touched, or opened for writing and left as it was
		}
		st.changes, st.prior = cs, ps
	}
	a.steps = append(a.steps, st)
}

// apply carries out one planned step and returns the changes it made.
func (a *applier) apply(st *applyStep) []audit.Change {
	rel := st.rel
	switch st.kind {
	case stepRemove:
		if err := a.real.Root.RemoveAll(rel); err != nil {
			a.fail(rel, err)
			return nil
		}
		return st.changes
	case stepChmod:
		_ = a.real.Root.Chmod(rel, st.fi.Mode().Perm())
		return nil
	case stepMkdir:
		err := a.real.Root.Mkdir(rel, st.fi.Mode().Perm())
		if err != nil && !errors.Is(err, fs.ErrExist) {
			a.fail(rel, err)
			return nil
		}
		_ = a.real.Root.Chmod(rel, st.fi.Mode().Perm())
		if err != nil {
			return nil // made meanwhile by someone else: not this command's
		}
		return st.changes
	}
	cs := a.file(st)
	if cs != nil {
		killpoint.Here("apply.file")
	}
	return cs
}

// file puts the upper file or symlink of st in place and returns the
// changes that made.
func (a *applier) file(st *applyStep) []audit.Change {
	rel, nc := st.rel, st.nc
	dirRel, name := path.Split(rel)
	if dirRel == "" {
		dirRel = "."
	}
	up, err := a.upper.Open(dirRel)
	if err != nil {
		a.fail(rel, err)
		return nil
	}
	defer up.Close()
	rd, err := a.real.Root.Open(dirRel)
	if err != nil {
		a.fail(rel, err)
		return nil
	}
	defer rd.Close()
	upFD, realFD := int(up.Fd()), int(rd.Fd())
	err = renameat2(upFD, name, realFD, name, renameNoReplace)
	if err == nil {
		a.settle(rel)
		if st.prior != nil {
			return []audit.Change{nc} // what was there went meanwhile
		}
		return st.changes
	}
	if errors.Is(err, syscall.EEXIST) {
		err = renameat2(upFD, name, realFD, name, renameExchange)
	}
	if err == nil {
		a.settle(rel)
		// What was there is now at rel of the upper layer: when it is not
		// what the plan kept (a file operation wrote there meanwhile),
		// keep that too.
		if a.asPlanned(st) {
			return st.changes
		}
		ps, err := a.o.Priors(a.old, rel)
		if err != nil {
			a.s.box.Logger().Error("command change applied, but what it replaced was not kept", "path", nc.Path, "err", err)
			return st.changes
		}
		cs, _ := replacedChanges(ps, nc)
		return cs
	}
	if !errors.Is(err, syscall.EXDEV) {
		a.fail(rel, err)
		return nil
	}
	// Different file systems: copy and rename (what it replaces was kept
	// by the plan).
	if err := copyInto(a.upper, a.real.Root, rel, st.fi, nc.Link); err != nil {
		a.fail(rel, err)
		return nil
	}
	a.settle(rel)
	return st.changes
}

// asPlanned reports whether what a swap put at rel of the upper layer is
// what the plan kept of the real file.
func (a *applier) asPlanned(st *applyStep) bool {
	if len(st.prior) != 1 || st.prior[0].Dir {
		return false
	}
	p := st.prior[0]
	if p.Link != "" {
		t, err := a.upper.Readlink(st.rel)
		return err == nil && t == p.Link
	}
	if p.Version == "" {
		return false
	}
	sum, _, err := hashFile(a.upper, st.rel)
	return err == nil && sum == p.Version
}

// replacedChanges are the changes of nc taking the place of ps; same
// when nothing changed (the same content and mode, or the same link).
func replacedChanges(ps []sandbox.Prior, nc audit.Change) (cs []audit.Change, same bool) {
	if len(ps) == 1 && !ps[0].Dir && ps[0].Link == "" && nc.Link == "" {
		p := ps[0]
		if p.Version != "" && p.Version == nc.After && p.Mode == nc.Mode {
			return nil, true
		}
		nc.Kind, nc.SizeBefore, nc.Version, nc.Mode, nc.NotKept = audit.Modified, p.Size, p.Version, p.Mode, p.NotKept
		return []audit.Change{nc}, false
	}
	if len(ps) == 1 && ps[0].Link != "" && ps[0].Link == nc.Link {
		return nil, true
	}
	return append(sandbox.Removed(ps), nc), false
}

func hashFile(root *os.Root, rel string) (string, int64, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// copyInto copies the upper file or symlink rel over rel of dst, through
// a temporary file renamed into place.
func copyInto(src, dst *os.Root, rel string, fi fs.FileInfo, link string) error {
	if link != "" {
		if err := dst.RemoveAll(rel); err != nil {
			return err
		}
		return dst.Symlink(link, rel)
	}
	in, err := src.OpenFile(rel, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path.Join(path.Dir(rel), sandbox.CommandTemp(layerSeq.Add(1)))
	out, err := dst.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dst.Chmod(tmp, fi.Mode().Perm())
	}
	if err == nil {
		err = dst.Rename(tmp, rel)
	}
	if err != nil {
		_ = dst.Remove(tmp)
	}
	return err
}
