package execbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/execbox/limits"
)

// A spare is a sandbox's first process made ahead of time, as root
// (corral-netinit spare, app/netinit/spare.go), already in a memory cgroup
// of its own with the command's limit: moving a process into a cgroup
// waits for an RCU grace period, 8 ms (median; up to 28 ms) of a `true`
// that took 30 ms on a loaded machine, and a spare pays it between
// commands. A run takes the Runner's spare if there is one and a new one
// is made behind it; a run that finds none starts its helper as before.
// The spare becomes the asroot helper by exec, so the sandbox is the same
// either way: every process of the command, and the helper that started
// it (a few MiB), is in the cgroup from its first instruction.
//
// Spares are used only where the process limit needs no pids cgroup: as
// root on Linux 5.14 and later, where RLIMIT_NPROC (set on the sandbox's
// init, which is uid 0 of the helper's user namespace, not host root) is
// counted per user namespace (procLimit).
//
// Not guaranteed: a spare unused for spareIdle is let go, so the first
// command after a quiet spell pays the grace period again; a spare whose
// Corral is killed dies with it (Pdeathsig), and its empty cgroup is
// removed by the next Corral's sweep (sweepCgroups).
type spare struct {
	cmd  *exec.Cmd
	sock *os.File // our end of the socket it waits on
	dir  string   // its memory cgroup; "" when commands have none
	made time.Time
}

// waitingJoins counts the cgroup joins made while a sandbox waited to
// start (each waits for a grace period), for tests.
var waitingJoins atomic.Int64

// spareIdle is how long a spare waits for a command before it is let go.
const spareIdle = 30 * time.Second

// spareMaxArgv: a longer command starts a helper of its own, so that
// one too long to start is refused as such (E2BIG from exec).
const spareMaxArgv = 64 << 10

func argvBytes(argv []string) int {
	n := 0
	for _, a := range argv {
		n += len(a) + 1
	}
	return n
}

// useSpares says whether runs start from spares here.
func (r *Runner) useSpares() bool {
	return r.asRoot && r.netinit != "" && (r.procs.PerNS || r.procs.Cgroup == nil)
}

// takeSpare returns the Runner's spare, or nil when there is none, and
// has the next one made.
func (r *Runner) takeSpare() *spare {
	if !r.useSpares() {
		return nil
	}
	defer r.refillSpare()
	select {
	case sp := <-r.spares:
		if time.Since(sp.made) < spareIdle && sp.alive() {
			return sp
		}
		go sp.discard()
	default:
	}
	return nil
}

// refillSpare makes a spare in the background unless one is there or
// being made.
func (r *Runner) refillSpare() {
	if !r.makingSpare.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.makingSpare.Store(false)
		sp, err := r.makeSpare()
		if err != nil {
			r.log.Debug("execbox: no spare sandbox process", "err", err)
			return
		}
		select {
		case r.spares <- sp:
			time.AfterFunc(spareIdle, func() {
				select {
				case old := <-r.spares:
					if old == sp {
						sp.discard()
						return
					}
					select {
					case r.spares <- old: // a newer one: keep it
					default:
						old.discard()
					}
				default:
				}
			})
		default:
			sp.discard()
		}
	}()
}

// makeSpare starts a spare and puts it in a new memory cgroup with the
// command's limit.
func (r *Runner) makeSpare() (sp *spare, err error) {
	var dirs []string
	if r.memory != nil && r.limits.Total > 0 {
		if dirs, err = limits.Make([]limits.Limit{{Ctl: r.memory, Value: r.limits.Total}}); err != nil {
			return nil, err
		}
	}
	sp = &spare{made: time.Now()}
	if len(dirs) > 0 {
		sp.dir = dirs[0]
	}
	defer func() {
		if err != nil {
			sp.discard()
		}
	}()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return sp, err
	}
	sp.sock = os.NewFile(uintptr(pair[0]), "spare")
	theirs := os.NewFile(uintptr(pair[1]), "spare-theirs")
	defer theirs.Close()
	sealFDs()
	cmd := exec.Command(r.netinit, "spare", "3")
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{theirs}
	// No new mount namespace yet: the spare makes its own when the
	// command comes, so it sees what was mounted meanwhile.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := start(cmd); err != nil {
		return sp, err
	}
	sp.cmd = cmd
	if sp.dir != "" {
		if err := limits.Join(sp.dir, cmd.Process.Pid); err != nil {
			return sp, err
		}
	}
	return sp, nil
}

// alive reports whether the spare's process is still there to take a
// command (nothing but Corral should end it, but a spare found dead is
// not used: the run starts its helper itself).
func (sp *spare) alive() bool {
	var si unix.Siginfo
	err := unix.Waitid(unix.P_PID, sp.cmd.Process.Pid, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && si.Signo == 0 // Linux leaves it zero when nothing has exited
}

// discard lets the spare go: its socket closed, it exits; then its
// cgroup is removed.
func (sp *spare) discard() {
	if sp.sock != nil {
		sp.sock.Close()
	}
	if sp.cmd != nil {
		done := make(chan struct{})
		go func() { sp.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			sp.cmd.Process.Kill()
			<-done
		}
	}
	if sp.dir != "" {
		_ = limits.Remove(sp.dir)
	}
}

// launch makes the spare the program argv with files as its descriptors
// 0, 1, 2, 3 …; stdin is what it reads on 0 (nil: nothing). The caller
// waits for it through sp.cmd, as for a command it started.
func (sp *spare) launch(argv []string, stdin []byte, files []*os.File) error {
	argvR, argvW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer argvR.Close()
	var b bytes.Buffer
	for _, a := range argv {
		b.WriteString(a)
		b.WriteByte(0)
	}
	go func() {
		_, _ = argvW.Write(b.Bytes()) // the spare reads it all; fails only if it died
		argvW.Close()
	}()
	in, err := stdinFile(stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	fds := []int{int(argvR.Fd()), int(in.Fd())}
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	err = unix.Sendmsg(int(sp.sock.Fd()), []byte{1}, unix.UnixRights(fds...), nil, 0)
	sp.sock.Close()
	if err != nil {
		return fmt.Errorf("hand the command to the spare: %w", err)
	}
	return nil
}

// stdinFile is a descriptor to read data from: /dev/null when there is
// none, else a pipe fed by a goroutine.
func stdinFile(data []byte) (*os.File, error) {
	if len(data) == 0 {
		return os.Open(os.DevNull)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		_, _ = wr.Write(data) // fails once the command closed its input
		wr.Close()
	}()
	return rd, nil
}

// inCgroup reports whether pid is listed in the cgroup at dir.
func inCgroup(dir string, pid int) bool {
	b, err := os.ReadFile(dir + "/cgroup.procs")
	if err != nil {
		return false
	}
	return slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid))
}
