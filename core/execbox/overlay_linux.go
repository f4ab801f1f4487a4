package execbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"corral/core/execbox/userns"
	"corral/core/paths"
)

// Overlays (Spec.LayerDir). bubblewrap 0.8 has no --overlay, and the
// sandbox itself may not mount anything, so corral-netinit's "overlay"
// mode does it one step earlier: Run starts it in a new user and mount
// namespace mapped to the owner's own uid and gid, with CAP_SYS_ADMIN
// and the file capabilities overlayfs works with as ambient capabilities; it mounts an overlay on a "merged" folder in
// LayerDir for each writable folder (lower = the real folder), drops
// every capability and execs bwrap with Corral's unchanged options except
// that the merged folders are the sources of the read-write binds. The
// mounts exist only in that namespace. The real folders are never written
// during the run; the upper layers hold everything the command wrote.

// errOverlay: the helper stopped before bubblewrap started.
var errOverlay = errors.New("the overlay helper failed")

// stageDir is where, as root, the asroot helper shows the host paths
// bubblewrap binds (a tmpfs over /sys in the helper's mount namespace).
const stageDir = "/sys"

const idmapFailed = "Corral runs as root, and runs commands as an unprivileged user who sees the agent's folders through id-mapped mounts; the kernel or the file system of these folders does not support them (Linux 5.12 or later, and ext4, xfs, btrfs or tmpfs), so the command did not run. Run Corral as an ordinary user, or keep its folders on such a file system."

// Overlay reports whether commands can run on overlays (Spec.LayerDir),
// and otherwise why not, as a sentence for the owner.
func (r *Runner) Overlay() (bool, string) {
	if !r.ok {
		return false, r.why
	}
	if r.netinit == "" {
		return false, "Corral was started without its corral-netinit program, which sets up the overlay that records what commands change; their changes are not recorded and cannot be undone."
	}
	r.ovMu.Lock()
	defer r.ovMu.Unlock()
	return r.ovWhy == "", r.ovWhy
}

// RetryOverlay forgets why overlays were refused and probes again in dir
// (ProbeOverlay): a refusal may have been passing (a probe that timed out
// on a loaded machine, a mount that failed once). It reports whether
// overlays can be used now.
func (r *Runner) RetryOverlay(ctx context.Context, dir string) bool {
	if !r.ok || r.netinit == "" {
		return false
	}
	r.setOverlayWhy("")
	return r.ProbeOverlay(ctx, dir) == nil
}

func (r *Runner) setOverlayWhy(why string) {
	r.ovMu.Lock()
	r.ovWhy = why
	r.ovMu.Unlock()
}

// ProbeOverlay checks once, in a folder under dir (Corral's own), that
// the kernel lets the helper mount an overlay whose deletions show as
// whiteouts; when it does not, Overlay reports false from then on. It
// returns that verdict's error.
func (r *Runner) ProbeOverlay(ctx context.Context, dir string) error {
	if ok, why := r.Overlay(); !ok {
		return errors.New(why)
	}
	err := r.probeOverlay(ctx, dir)
	if err != nil {
		r.log.Warn("execbox: overlays unavailable; commands' changes are not recorded", "err", err)
		why := "The kernel refused the overlay Corral uses to record what commands change (" + err.Error() + "), so their changes are not recorded and cannot be undone."
		if refused := userns.Refused(r.netinit); refused != "" {
			why = "What commands change is not recorded and cannot be undone: " + strings.TrimPrefix(refused, "Commands are unavailable: ")
		}
		r.setOverlayWhy(why)
	}
	return err
}

func (r *Runner) probeOverlay(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	d, err := os.MkdirTemp(dir, "probe-")
	if err != nil {
		return err
	}
	defer RemoveLayers(d)
	lower, upper, work, merged := filepath.Join(d, "l"), filepath.Join(d, "u"), filepath.Join(d, "w"), filepath.Join(d, "m")
	for _, p := range []string{lower, upper, work, merged} {
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(lower, "x"), []byte("x"), 0o600); err != nil {
		return err
	}
	spec := []byte(strings.Join([]string{lower, upper, work, merged}, "\x00") + "\x00")
	p := &plan{argv: []string{"/bin/sh", "-c", "rm -- '" + merged + "/x'"}, overlay: spec}
	if r.asRoot {
		// Staged at /sys/0, seen by the unprivileged user (asroot.go).
		p.argv[2] = "rm -- " + stageDir + "/0/x"
		p.writable = []writableBind{{src: lower, idx: -1, upper: upper, work: work}}
		if err := os.Lchown(upper, dropID, dropID); err != nil {
			return err
		}
		r.stagedArgv(p)
	}
	cmd, files, err := r.helperCmd(p, p.argv, nil)
	if err != nil {
		return err
	}
	defer p.status.Close() // the probe reads the helper's exit status, not its status pipe
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = start(cmd)
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(out.String()))
	}
	fi, err := os.Lstat(filepath.Join(upper, "x"))
	if err != nil {
		return fmt.Errorf("no whiteout for a deleted file: %w", err)
	}
	if !IsWhiteout(fi) {
		return fmt.Errorf("a deleted file left %v, not a whiteout", fi.Mode())
	}
	if _, err := os.Lstat(filepath.Join(lower, "x")); err != nil {
		return fmt.Errorf("the real folder was changed: %w", err)
	}
	return nil
}

// IsWhiteout reports whether fi (from Lstat in a Layer's Upper) is
// overlayfs's mark of a deleted entry.
func IsWhiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

// layer makes the upper, work and merged folders of every writable bind
// under dir, points the binds at the merged folders and returns the
// layers. Nothing is mounted yet: the helper does that.
func (p *plan) layer(dir string) ([]Layer, error) {
	if !paths.IsCleanAbs(dir) {
		return nil, fmt.Errorf("layer folder %q is not absolute and clean", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var spec bytes.Buffer
	var out []Layer
	for i, w := range p.writable {
		d := filepath.Join(dir, strconv.Itoa(i))
		upper, work, merged := filepath.Join(d, "u"), filepath.Join(d, "w"), filepath.Join(d, "m")
		for _, q := range []string{d, upper, work, merged} {
			if err := os.Mkdir(q, 0o700); err != nil {
				RemoveLayers(dir)
				return nil, err
			}
		}
		for _, q := range []string{w.src, upper, work, merged} {
			if strings.ContainsAny(q, ",:\\\n") {
				RemoveLayers(dir)
				return nil, fmt.Errorf("path %q cannot be given to overlayfs", q)
			}
			spec.WriteString(q)
			spec.WriteByte(0)
		}
		p.argv[w.idx] = merged
		p.writable[i].upper, p.writable[i].work = upper, work
		out = append(out, Layer{Host: w.host, Upper: upper})
	}
	p.overlay = spec.Bytes()
	return out, nil
}

// unlayer points the binds back at the real folders.
func (p *plan) unlayer() {
	for i, w := range p.writable {
		p.argv[w.idx] = w.src
		p.writable[i].upper, p.writable[i].work = "", ""
	}
	p.overlay, p.status = nil, nil
}

// helperCmd wraps argv (bwrap's, or a probe's) in the overlay helper. It
// returns the command and the pipe ends the caller must close once the
// command has started; the status pipe's read end is p.status (one byte
// once the mounts are in place, nothing if the helper failed).
func (r *Runner) helperCmd(p *plan, argv []string, extra []*os.File) (*exec.Cmd, []*os.File, error) {
	args, files, err := r.helperArgs(p, argv, extra)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(r.netinit, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = append(append([]*os.File{}, extra...), files...)
	if r.asRoot {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Setpgid:    true,
			Cloneflags: unix.CLONE_NEWNS,
			Pdeathsig:  unix.SIGKILL,
		}
		return cmd, files, nil
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:                    true,
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: r.uid, HostID: r.uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: r.gid, HostID: r.gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		// overlayfs does its copy-ups, whiteouts and work-folder renames
		// with the mounter's credentials, so the helper mounts holding
		// what that takes; they count only in its own namespace, which
		// maps nothing but the owner's ids, and it drops them all before
		// it execs bwrap.
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH,
			unix.CAP_FOWNER, unix.CAP_FSETID, unix.CAP_CHOWN, unix.CAP_MKNOD,
			// to limit the namespace's share of the per-user inotify and
			// fanotify pools (user.max_inotify_instances …)
			unix.CAP_SYS_RESOURCE},
	}
	return cmd, files, nil
}

// helperArgs are the helper's arguments for argv (its descriptors: extra
// from 3, then the two pipe ends it returns, to close once the helper has
// started); it sets p.status and starts feeding the spec.
func (r *Runner) helperArgs(p *plan, argv []string, extra []*os.File) ([]string, []*os.File, error) {
	spec := p.overlay
	if r.asRoot {
		spec = p.stage
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		_, _ = specW.Write(spec) // the helper reads it all first; fails only if it died
		specW.Close()
	}()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specR.Close()
		return nil, nil, err
	}
	p.status = statusR
	specFD, statusFD := 3+len(extra), 4+len(extra)
	args := append([]string{"overlay", strconv.Itoa(specFD), strconv.Itoa(statusFD), "--"}, argv...)
	if r.asRoot {
		id := strconv.Itoa(dropID)
		args = append([]string{"asroot", id, id, strconv.Itoa(specFD), strconv.Itoa(statusFD), "--"}, argv...)
	}
	return args, []*os.File{specR, statusW}, nil
}

// spareLaunch starts a planned run's asroot helper from the spare sp
// instead of a new process, with the arguments and descriptors
// helperCmd gives it (stdout and stderr on 1 and 2, extra from 3, then
// the spec and status pipes). It returns the pipe ends to close once
// the helper has started.
func (r *Runner) spareLaunch(sp *spare, p *plan, argv []string, extra []*os.File, stdout, stderr *os.File) ([]*os.File, error) {
	args, files, err := r.helperArgs(p, argv, extra)
	if err != nil {
		return nil, err
	}
	fds := append(append([]*os.File{stdout, stderr}, extra...), files...)
	if err := sp.launch(append([]string{r.netinit}, args...), p.stdin, fds); err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	return files, nil
}

// RemoveLayers removes a layer folder (Spec.LayerDir, after its layers
// have been applied). The work folders overlayfs leaves have mode 0 and
// the command may have left folders without write permission, so
// permissions are opened first.
func RemoveLayers(dir string) {
	// overlayfs leaves work/work (and with volatile work/incompat) with
	// mode 0: open them first, or RemoveAll fails and the walk below runs.
	for _, pat := range []string{"*/w/work", "*/w/incompat", "*/w/incompat/*"} {
		if ms, err := filepath.Glob(filepath.Join(dir, pat)); err == nil {
			for _, m := range ms {
				_ = os.Chmod(m, 0o700)
			}
		}
	}
	if err := os.RemoveAll(dir); err == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// As root (Runner.asRoot), no process of a command may be host root. Every
// sandbox is started by corral-netinit's asroot mode (app/netinit), which
// runs bubblewrap as uid 0 of a user namespace of its own whose only
// mapping is 0 → dropID (and gid 0 → dropID): an unprivileged host user
// that owns nothing, holds no file and appears in no passwd. The command
// keeps seeing itself as uid 0 (as it did when Corral ran as root), with
// no capability, and its /proc/self/uid_map reads "0 dropID 1".
//
// That user cannot walk Corral's folders (/root, the data folder, a test's
// 0700 temporary folder), so the helper stages every host path bubblewrap
// binds, outside the system view, at /sys/N in its own mount namespace: a
// read-only one as a plain bind, a writable one (the scope, the shared
// folder, a read-write Mount) as an id-mapped mount whose mapping is the
// sandbox's own: what is root's on disk is the command's, and what the
// command creates is root's on disk, owned as Corral's other files are,
// with no step after the run. With Spec.LayerDir the id-mapped folder is
// the overlay's lower layer; the upper layer is owned by dropID (overlayfs
// creates with the caller's ids) and the files the command leaves there
// are given to Corral's uid when they are applied (core/sandbox).
const dropID = 2147483646

// stagedArgv returns p.argv with every host path the asroot helper
// stages replaced by its place under /sys, and sets p.stage, the
// helper's spec (asroot.go).
func (r *Runner) stagedArgv(p *plan) []string {
	argv := slices.Clone(p.argv)
	var spec bytes.Buffer
	field := func(s string) { spec.WriteString(s); spec.WriteByte(0) }
	n := 0
	place := func(idx int) {
		if idx >= 0 {
			argv[idx] = stageDir + "/" + strconv.Itoa(n)
		}
		n++
	}
	for _, w := range p.writable {
		if w.upper != "" && p.overlay != nil {
			field("o")
			field(w.src)
			field(w.upper)
			field(w.work)
		} else {
			field("i")
			field(w.src)
		}
		place(w.idx)
	}
	for _, idx := range p.readonly {
		field("b")
		field(p.argv[idx])
		place(idx)
	}
	p.stage = spec.Bytes()
	return argv
}
