package execbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"corral/core/execbox/overlay"
	"corral/core/execbox/userns"
	"corral/core/paths"
)

// Overlays (Spec.LayerDir) and runs as root, the Runner's side: the
// helper that mounts and stages folders is corral-netinit, and the
// pieces that need no Runner are in core/execbox/overlay, whose doc says
// how both work.

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
		// Staged at /sys/0, seen by the unprivileged user (app/netinit/asroot.go).
		p.argv[2] = "rm -- " + overlay.StageDir + "/0/x"
		p.writable = []writableBind{{src: lower, idx: -1, upper: upper, work: work}}
		if err := os.Lchown(upper, overlay.DropID, overlay.DropID); err != nil {
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
		upper, work, merged, part, err := overlay.Layer(filepath.Join(dir, strconv.Itoa(i)), w.src)
		if err != nil {
			RemoveLayers(dir)
			return nil, err
		}
		spec.Write(part)
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
	cmd.SysProcAttr = overlay.HelperAttr(r.asRoot, r.uid, r.gid)
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
	args := overlay.HelperArgs(r.asRoot, specFD, statusFD, argv)
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
	if err := sp.Launch(append([]string{r.netinit}, args...), p.stdin, fds); err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	return files, nil
}

// stagedArgv returns p.argv with every host path the asroot helper
// stages replaced by its place under overlay.StageDir, and sets p.stage,
// the helper's spec (app/netinit/asroot.go).
func (r *Runner) stagedArgv(p *plan) []string {
	argv := slices.Clone(p.argv)
	var st overlay.Stage
	place := func(idx int, at string) {
		if idx >= 0 {
			argv[idx] = at
		}
	}
	for _, w := range p.writable {
		if w.upper != "" && p.overlay != nil {
			place(w.idx, st.Overlay(w.src, w.upper, w.work))
		} else {
			place(w.idx, st.IDMapped(w.src))
		}
	}
	for _, idx := range p.readonly {
		place(idx, st.Bind(p.argv[idx]))
	}
	p.stage = st.Spec()
	return argv
}
