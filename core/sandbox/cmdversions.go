package sandbox

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/versions"
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

// notKeptTooMany: a folder a command deleted held too many entries.
const notKeptTooMany = "too_many"

var layerSeq atomic.Int64

// layerDir is a fresh folder for one command's layers.
func (s *Sandbox) layerDir() string {
	return filepath.Join(s.versions.Dir(), "run", strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(layerSeq.Add(1), 10))
}

// CommandVersions reports whether what commands change is recorded, and
// otherwise why not. The first call checks, once, that the kernel allows
// the overlay.
func (s *Sandbox) CommandVersions(ctx context.Context) (bool, string) {
	if !s.keeping() {
		return false, "Corral keeps no versions here."
	}
	ec := s.exec
	if ec.Runner == nil {
		return false, "Commands are unavailable."
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if !s.probed {
		if ok, _ := ec.Runner.Overlay(); ok {
			run := filepath.Join(s.versions.Dir(), "run")
			execbox.RemoveLayers(run) // what a crash left
			_ = ec.Runner.ProbeOverlay(ctx, run)
		}
		s.probed = true
	}
	return ec.Runner.Overlay()
}

// FileChange is one file a command changed, as command.run reports it.
type FileChange struct {
	Path string
	Kind audit.ChangeKind
}

// applier applies one layer to its real folder.
type applier struct {
	s       *Sandbox
	who     string // whose share of the version store (priors)
	refused error  // the version store's first refusal (a full share)
	upper   *os.Root
	real    fsbox.Dir
	old     fsbox.Dir // the upper root seen as the real folder: where swapped-out entries are
	changes []audit.Change
	failed  []string
}

// applyLayers applies every layer (dirs maps a Layer's Host to its real
// folder) for who, and returns the changes, in the order undo must
// reverse, the paths it could not change, and the version store's
// refusal when that was why (core/versions: who's share is full).
func (s *Sandbox) applyLayers(who string, layers []execbox.Layer, dirs map[string]fsbox.Dir) ([]audit.Change, []string, error) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	var changes []audit.Change
	var failed []string
	var refused error
	for _, l := range layers {
		d, ok := dirs[l.Host]
		if !ok {
			failed = append(failed, l.Host)
			continue
		}
		up, err := os.OpenRoot(l.Upper)
		if err != nil {
			s.log.Error("command layer unreadable", "path", l.Upper, "err", err)
			failed = append(failed, d.Visible("."))
			continue
		}
		a := &applier{s: s, who: who, upper: up, real: d, old: fsbox.Dir{Root: up, Prefix: d.Prefix}}
		a.dir(".", false)
		up.Close()
		changes = append(changes, a.changes...)
		failed = append(failed, a.failed...)
		refused = cmp.Or(refused, a.refused)
	}
	return changes, failed, refused
}

func (a *applier) fail(rel string, err error) {
	if errors.Is(err, versions.ErrFull) {
		a.refused = cmp.Or(a.refused, err)
	} else {
		a.s.log.Error("command change not applied", "path", a.real.Visible(rel), "err", err)
	}
	a.failed = append(a.failed, a.real.Visible(rel))
}

func isOpaque(root *os.Root, rel string) bool {
	f, err := root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4)
	n, err := unix.Fgetxattr(int(f.Fd()), "user.overlay.opaque", buf)
	return err == nil && string(buf[:n]) == "y"
}

// dir applies the upper folder rel; opaque: the real folder's entries
// the layer lacks were deleted.
func (a *applier) dir(rel string, opaque bool) {
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
					a.remove(path.Join(rel, n))
				}
			}
		}
	}
	for _, e := range ents {
		r := path.Join(rel, e.Name())
		fi, err := e.Info()
		if err != nil {
			a.fail(r, err)
			continue
		}
		switch {
		case execbox.IsWhiteout(fi):
			a.remove(r)
		case fi.IsDir():
			a.mkdir(r, fi, opaque || isOpaque(a.upper, r))
		case fi.Mode().IsRegular(), fi.Mode()&fs.ModeSymlink != 0:
			a.file(r, fi)
		default:
			a.s.log.Info("special file a command made was not kept", "path", a.real.Visible(r))
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

// remove deletes rel of the real folder, keeping what it holds.
func (a *applier) remove(rel string) {
	if _, err := a.real.Root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		return
	}
	ps, err := a.s.priors(a.who, a.real, rel, false, false)
	if err != nil {
		if errs.As(err).Kind != errs.TooLarge {
			a.fail(rel, err)
			return
		}
		a.changes = append(a.changes, audit.Change{Path: a.real.Visible(rel), Kind: audit.Deleted, NotKept: notKeptTooMany})
	} else {
		a.changes = append(a.changes, removed(ps)...)
	}
	if err := a.real.Root.RemoveAll(rel); err != nil {
		a.fail(rel, err)
	}
}

func (a *applier) mkdir(rel string, fi fs.FileInfo, opaque bool) {
	rfi, err := a.real.Root.Lstat(rel)
	switch {
	case err == nil && rfi.IsDir():
		if rfi.Mode().Perm() != fi.Mode().Perm() {
			_ = a.real.Root.Chmod(rel, fi.Mode().Perm())
		}
	case err == nil:
		a.remove(rel)
		fallthrough
	default:
		if err := a.real.Root.Mkdir(rel, fi.Mode().Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			a.fail(rel, err)
			return
		}
		_ = a.real.Root.Chmod(rel, fi.Mode().Perm())
	}
	a.dir(rel, opaque)
}

// file puts the upper file or symlink rel in place.
func (a *applier) file(rel string, fi fs.FileInfo) {
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
	if rfi, err := a.real.Root.Lstat(rel); err == nil && rfi.IsDir() {
		a.remove(rel) // a file replaced a folder
	}
	dirRel, name := path.Split(rel)
	if dirRel == "" {
		dirRel = "."
	}
	up, err := a.upper.Open(dirRel)
	if err != nil {
		a.fail(rel, err)
		return
	}
	defer up.Close()
	rd, err := a.real.Root.Open(dirRel)
	if err != nil {
		a.fail(rel, err)
		return
	}
	defer rd.Close()
	upFD, realFD := int(up.Fd()), int(rd.Fd())
	err = unix.Renameat2(upFD, name, realFD, name, unix.RENAME_NOREPLACE)
	if err == nil {
		a.settle(rel)
		a.changes = append(a.changes, nc)
		return
	}
	if errors.Is(err, unix.EEXIST) {
		err = unix.Renameat2(upFD, name, realFD, name, unix.RENAME_EXCHANGE)
	}
	if err == nil {
		a.settle(rel)
		// What was there is now at rel of the upper layer.
		ps, err := a.s.priors(a.who, a.old, rel, false, false)
		if err != nil {
			// Not kept, so not changed: swap back.
			if err := unix.Renameat2(upFD, name, realFD, name, unix.RENAME_EXCHANGE); err != nil {
				a.s.log.Error("command change not undone", "path", vis, "err", err)
			}
			a.fail(rel, err)
			return
		}
		a.replaced(ps, nc)
		return
	}
	if !errors.Is(err, unix.EXDEV) {
		a.fail(rel, err)
		return
	}
	// Different file systems: keep, then copy and rename.
	ps, err := a.s.priors(a.who, a.real, rel, false, false)
	if err != nil {
		a.fail(rel, err)
		return
	}
	if err := copyInto(a.upper, a.real.Root, rel, fi, nc.Link); err != nil {
		a.fail(rel, err)
		return
	}
	a.replaced(ps, nc)
}

// replaced records nc, which took the place of ps.
func (a *applier) replaced(ps []prior, nc audit.Change) {
	if len(ps) == 1 && !ps[0].dir && ps[0].link == "" && nc.Link == "" {
		p := ps[0]
		if p.version != "" && p.version == nc.After && p.mode == nc.Mode {
			return // touched, or opened for writing and left as it was
		}
		nc.Kind, nc.SizeBefore, nc.Version, nc.Mode, nc.NotKept = audit.Modified, p.size, p.version, p.mode, p.notKept
		a.changes = append(a.changes, nc)
		return
	}
	if len(ps) == 1 && ps[0].link != "" && ps[0].link == nc.Link {
		return
	}
	a.changes = append(a.changes, removed(ps)...)
	a.changes = append(a.changes, nc)
}

func hashFile(root *os.Root, rel string) (string, int64, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return sumHex(h), n, err
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
	in, err := src.OpenFile(rel, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path.Join(path.Dir(rel), fmt.Sprintf(".corral-tmp-cmd-%d-%d", os.Getpid(), layerSeq.Add(1)))
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
