package execbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/errs"
	"corral/core/execbox/capture"
	"corral/core/execbox/limits"
	"corral/core/execbox/overlay"
	"corral/core/execbox/proxy"
)

const (
	setupFailed = "The sandbox could not be set up, so the command did not run."
	// drainWait bounds how long Run waits for output after bwrap exits; the
	// PID namespace is gone by then, so the pipes close at once in practice.
	drainWait = 5 * time.Second
)

var errNoChildPid = errors.New("bwrap exited before creating the sandbox")

// sandbox tracks one running bwrap so it can be killed without racing the
// reaping of its process (a reaped pid or process group may be reused).
type sandbox struct {
	mu     sync.Mutex
	pgid   int  // bwrap's process group (bwrap, and the sandbox's init until it starts a new session)
	child  int  // the sandbox's init, outside pid; 0 until known
	pidfd  int  // pidfd of child, -1 when none
	exited bool // bwrap has exited (it is a zombie or reaped): its pgid may not be signalled
	killed bool
}

func (b *sandbox) setChild(pid int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.child = pid
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		b.pidfd = fd
	}
}

// kill sends SIGKILL to the sandbox's init (which takes the whole PID
// namespace with it) and to bwrap's process group.
func (b *sandbox) kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.killed = true
	if b.pidfd >= 0 {
		_ = unix.PidfdSendSignal(b.pidfd, unix.SIGKILL, nil, 0)
	} else if b.child > 0 && !b.exited {
		_ = unix.Kill(b.child, unix.SIGKILL)
	}
	if !b.exited {
		_ = unix.Kill(-b.pgid, unix.SIGKILL)
	}
}

func (b *sandbox) markExited() {
	b.mu.Lock()
	b.exited = true
	b.mu.Unlock()
}

func (b *sandbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pidfd >= 0 {
		_ = unix.Close(b.pidfd)
		b.pidfd = -1
	}
}

func (b *sandbox) wasKilled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.killed
}

// exec runs a planned bwrap: it starts it, applies the limits while the
// sandbox waits on --block-fd, lets it go, collects output and reports.
func (r *Runner) exec(ctx context.Context, p *plan) (res Result, err error) {
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	var cgLimits []limits.Limit
	procs := r.limits.Procs
	if p.procs > 0 {
		procs = p.procs
	}
	// As root on Linux 5.14 and later, the command is uid 0 of the
	// helper's user namespace, not host root, and RLIMIT_NPROC (set on its
	// init with the others) counts that namespace's tasks: a pids cgroup
	// would add nothing but the cost of joining it (limits.Proc).
	if r.procs.Cgroup != nil && procs > 0 && !(r.asRoot && r.procs.PerNS) {
		cgLimits = append(cgLimits, limits.Limit{Ctl: r.procs.Cgroup, Value: int64(procs)})
	}
	var sp *spare // already in its memory cgroup (spare_linux.go)
	if argvBytes(p.argv) < spareMaxArgv {
		sp = r.takeSpare()
	}
	if sp != nil {
		defer func() {
			if sp != nil { // not launched
				go sp.Discard()
			}
		}()
	} else if r.memory != nil && r.limits.Total > 0 {
		cgLimits = append(cgLimits, limits.Limit{Ctl: r.memory, Value: r.limits.Total})
	}
	cgDirs, err := limits.Make(cgLimits)
	if err != nil {
		return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
	}
	// Joined before the sandbox existed: every process of it is in them.
	var joined []string
	if sp != nil && sp.Dir != "" {
		joined = []string{sp.Dir}
	}
	defer func() {
		if len(cgDirs)+len(joined) == 0 {
			return
		}
		// The sandbox's last tasks may take a moment to leave their
		// cgroups; the answer need not wait for that.
		go func() {
			for _, d := range append(cgDirs, joined...) {
				if err := limits.Remove(d); err != nil {
					r.log.Warn("execbox: cgroup left behind", "err", err)
				}
			}
		}()
	}()

	// Seven pipes: passwd, group, --info-fd, --block-fd, stdout, stderr, seccomp.
	var held []*os.File // every end we hold; closed on return
	defer func() {
		for _, f := range held {
			_ = f.Close()
		}
	}()
	var pipes [7][2]*os.File
	for i := range pipes {
		rd, wr, perr := os.Pipe()
		if perr != nil {
			return Result{}, errs.Wrap(perr, errs.IO, "", setupFailed)
		}
		held = append(held, rd, wr)
		pipes[i] = [2]*os.File{rd, wr}
	}
	passwdR, groupR := pipes[0][0], pipes[1][0]
	infoR, infoW := pipes[2][0], pipes[2][1]
	blockR, blockW := pipes[3][0], pipes[3][1]
	outR, outW := pipes[4][0], pipes[4][1]
	errR, errW := pipes[5][0], pipes[5][1]
	filterR := pipes[6][0]
	for _, fill := range []struct {
		w    *os.File
		data []byte
	}{{pipes[0][1], p.files[0]}, {pipes[1][1], p.files[1]}, {pipes[6][1], r.seccomp}} {
		if err := writeAndClose(fill.w, fill.data); err != nil {
			return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
		}
	}

	var egressOurs, egressTheirs *os.File
	if p.egress != nil {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
		}
		egressOurs, egressTheirs = os.NewFile(uintptr(pair[0]), "egress"), os.NewFile(uintptr(pair[1]), "egress-sandbox")
		held = append(held, egressOurs, egressTheirs)
	}

	// bwrap's options travel on a pipe (--args), so the command line that
	// ps shows to every user of the machine is "bwrap --args 7 -- /bin/sh
	// -c -- COMMAND": no environment values, no host paths. (The command
	// itself shows anyway, as the sandboxed shell's own arguments.)
	argv := p.argv
	if r.asRoot {
		argv = r.stagedArgv(p)
	}
	dash := slices.Index(argv, "--")
	argsR, argsW, err := os.Pipe()
	if err != nil {
		return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
	}
	held = append(held, argsR, argsW)
	go func() {
		var b bytes.Buffer
		for _, a := range argv[1:dash] {
			b.WriteString(a)
			b.WriteByte(0)
		}
		_, _ = argsW.Write(b.Bytes()) // bwrap reads it all before anything else; fails only if bwrap died
		_ = argsW.Close()
	}()

	sealFDs()
	bwrapArgv := append([]string{argv[0], "--args", strconv.Itoa(fdArgs)}, argv[dash:]...)
	extra := []*os.File{passwdR, groupR, infoW, blockR, argsR, filterR} // fds 3–8
	if egressTheirs != nil {
		extra = append(extra, egressTheirs) // fd 9
	}
	var cmd *exec.Cmd
	var helperFiles []*os.File
	if sp != nil && r.asRoot {
		helperFiles, err = r.spareLaunch(sp, p, bwrapArgv, extra, outW, errW)
		if err != nil {
			return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
		}
		cmd, sp = sp.Cmd, nil
		cmd.WaitDelay = drainWait
		held = append(held, helperFiles...)
		held = append(held, p.status)
	} else if p.overlay != nil || r.asRoot {
		// The overlay helper mounts the layers, then becomes bwrap with
		// the same descriptors (core/execbox/overlay); as root, it stages the
		// folders and starts bwrap as an unprivileged user (app/netinit/asroot.go).
		var err error
		cmd, helperFiles, err = r.helperCmd(p, bwrapArgv, extra)
		if err != nil {
			return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
		}
		held = append(held, helperFiles...)
		held = append(held, p.status)
	} else {
		cmd = exec.Command(bwrapArgv[0], bwrapArgv[1:]...)
		cmd.Env = []string{}
		cmd.Dir = "/"
		cmd.ExtraFiles = extra
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if cmd.Process != nil {
		// Started from the spare.
	} else if err := startCmd(cmd, p.stdin, outW, errW); err != nil {
		if errors.Is(err, syscall.E2BIG) {
			return Result{}, errs.Wrap(err, errs.TooLarge, "", "The command and its environment are too large to start.")
		}
		return Result{}, errs.Wrap(err, errs.IO, "", setupFailed)
	}
	started := time.Now()
	for _, f := range append([]*os.File{passwdR, groupR, infoW, blockR, argsR, filterR, outW, errW, egressTheirs}, helperFiles...) {
		if f != nil {
			_ = f.Close()
		}
	}
	if egressOurs != nil {
		stop := proxy.Serve(runCtx, egressOurs, MaxProxyConns, p.egress, r.log)
		defer stop()
	}

	box := &sandbox{pgid: cmd.Process.Pid, pidfd: -1}
	defer box.close()

	// Output readers.
	var emit func(string, []byte)
	if p.onOutput != nil {
		var mu sync.Mutex
		emit = func(stream string, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			p.onOutput(stream, b)
		}
	}
	stdout := &capture.Stream{Name: "stdout", Limit: p.maxOutput, Emit: emit}
	stderr := &capture.Stream{Name: "stderr", Limit: p.maxOutput, Emit: emit}
	var readers sync.WaitGroup
	readers.Go(func() { stdout.ReadFrom(outR) })
	readers.Go(func() { stderr.ReadFrom(errR) })

	// Waiter: notes bwrap's exit before reaping it, so kill never signals
	// a process group that may already be reused.
	waited := make(chan error, 1)
	go func() {
		var si unix.Siginfo
		for {
			if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &si, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
				break
			}
		}
		box.markExited()
		waited <- cmd.Wait()
	}()

	// Attach: learn the sandbox's init from --info-fd, set its limits and
	// cgroup while it waits on --block-fd, then let it run.
	type info struct {
		pid int
		err error
	}
	infoCh := make(chan info, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(infoR, 1<<16))
		var v struct {
			ChildPid int `json:"child-pid"`
		}
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			err = json.Unmarshal(b, &v)
		}
		infoCh <- info{v.ChildPid, err}
	}()
	var attachErr error
	childKnown := false
	select {
	case in := <-infoCh:
		switch {
		case in.err != nil:
			attachErr = fmt.Errorf("read bwrap info: %w", in.err)
		case in.pid <= 0:
			// bwrap failed before creating the sandbox; its stderr says why.
		default:
			childKnown = true
			box.setChild(in.pid)
			ls := p.rlimits
			if ls == nil {
				ls = r.rlimits()
			}
			attachErr = limits.Apply(in.pid, ls)
			for _, d := range joined {
				if attachErr == nil && !limits.Holds(d, in.pid) {
					waitingJoins.Add(1) // never expected: it was born there
					attachErr = limits.Join(d, in.pid)
				}
			}
			for _, d := range cgDirs {
				if attachErr == nil {
					waitingJoins.Add(1)
					attachErr = limits.Join(d, in.pid)
				}
			}
		}
		if attachErr != nil {
			box.kill() // before closing the block pipe: never let it run unlimited
		} else if childKnown {
			_, _ = blockW.Write([]byte{1})
		}
	case <-runCtx.Done():
		box.kill()
	}
	_ = blockW.Close()

	var waitErr error
	select {
	case waitErr = <-waited:
	case <-runCtx.Done():
		box.kill()
		waitErr = <-waited
	}
	duration := time.Since(started)

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
		_ = outR.Close()
		_ = errR.Close()
		<-drained
	}

	res = Result{
		Stdout:    stdout.Text(),
		Stderr:    stderr.Text(),
		Truncated: stdout.Truncated() || stderr.Truncated(),
		Duration:  duration,
	}
	if attachErr != nil {
		return Result{}, errs.Wrap(fmt.Errorf("apply limits: %w", attachErr), errs.IO, "", setupFailed)
	}
	if box.wasKilled() {
		res.ExitCode, res.Signal = 128+int(unix.SIGKILL), "SIGKILL"
		if ctx.Err() != nil {
			res.Cancelled = true
		} else {
			res.TimedOut = true
		}
		return res, nil
	}
	if !childKnown {
		if p.status != nil {
			var b [1]byte
			n, _ := p.status.Read(b[:])
			cause := fmt.Errorf("%v: %s", waitErr, strings.TrimSpace(res.Stderr))
			switch {
			case n == 1 && b[0] == 'I':
				return Result{}, errs.Wrap(cause, errs.Unavailable, "", "%s", overlay.IDMapFailed)
			case n == 0 && p.overlay != nil:
				// The helper stopped before bwrap started: nothing ran.
				return Result{}, fmt.Errorf("%w: %w", overlay.ErrHelper, cause)
			}
		}
		cause := fmt.Errorf("%w: %v: %s", errNoChildPid, waitErr, strings.TrimSpace(res.Stderr))
		return Result{}, errs.Wrap(cause, errs.IO, "", setupFailed)
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	return res, nil
}

// sealFDs marks every descriptor above stderr close-on-exec. os/exec passes
// on any descriptor without that flag, so without this whatever the daemon
// inherited (a terminal, a socket, a pipe from its parent) would reach the
// sandbox. Descriptors Go itself opens are close-on-exec already.
func sealFDs() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// startCmd starts cmd with stdin's bytes as its input.
func startCmd(cmd *exec.Cmd, stdin []byte, stdout, stderr *os.File) error {
	if len(stdin) > 0 {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = drainWait
	return start(cmd)
}

func writeAndClose(w *os.File, b []byte) error {
	_, err := w.Write(b) // small: fits the pipe buffer
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// exitStatus reads bwrap's status. bwrap reports a command killed by signal
// N as exit code 128+N; such codes are read as that signal.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ps.ExitCode(), ""
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	code := ws.ExitStatus()
	if code > 128 && code < 128+65 {
		if name := unix.SignalName(syscall.Signal(code - 128)); name != "" {
			return code, name
		}
	}
	return code, ""
}
