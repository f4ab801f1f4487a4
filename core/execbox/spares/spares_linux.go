package spares

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/execbox/limits"
)

// Spare is one spare process, waiting on its socket for a command; Cmd
// is what the caller waits on once it is launched.
type Spare struct {
	Cmd  *exec.Cmd
	Dir  string // its memory cgroup; "" when commands have none
	Made time.Time
	sock *os.File // our end of the socket it waits on
}

// Make starts a spare of corral-netinit (its "spare" mode), in a new
// memory cgroup with limit total under memory when memory is not nil and
// total > 0. seal is called just before the start and start starts it
// (execbox's, which binds it to Corral's life).
func Make(netinit string, memory *limits.Cgroup, total int64, seal func(), start func(*exec.Cmd) error) (sp *Spare, err error) {
	var dirs []string
	if memory != nil && total > 0 {
		if dirs, err = limits.Make([]limits.Limit{{Ctl: memory, Value: total}}); err != nil {
			return nil, err
		}
	}
	sp = &Spare{Made: time.Now()}
	if len(dirs) > 0 {
		sp.Dir = dirs[0]
	}
	defer func() {
		if err != nil {
			sp.Discard()
		}
	}()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return sp, err
	}
	sp.sock = os.NewFile(uintptr(pair[0]), "spare")
	theirs := os.NewFile(uintptr(pair[1]), "spare-theirs")
	defer theirs.Close()
	seal()
	cmd := exec.Command(netinit, "spare", "3")
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{theirs}
	// No new mount namespace yet: the spare makes its own when the
	// command comes, so it sees what was mounted meanwhile.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := start(cmd); err != nil {
		return sp, err
	}
	sp.Cmd = cmd
	if sp.Dir != "" {
		if err := limits.Join(sp.Dir, cmd.Process.Pid); err != nil {
			return sp, err
		}
	}
	return sp, nil
}

// Alive reports whether the spare's process is still there to take a
// command (nothing but Corral should end it, but a spare found dead is
// not used: the run starts its helper itself).
func (sp *Spare) Alive() bool {
	var si unix.Siginfo
	err := unix.Waitid(unix.P_PID, sp.Cmd.Process.Pid, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && si.Signo == 0 // Linux leaves it zero when nothing has exited
}

// Discard lets the spare go: its socket closed, it exits; then its
// cgroup is removed.
func (sp *Spare) Discard() {
	if sp.sock != nil {
		sp.sock.Close()
	}
	if sp.Cmd != nil {
		done := make(chan struct{})
		go func() { sp.Cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			sp.Cmd.Process.Kill()
			<-done
		}
	}
	if sp.Dir != "" {
		_ = limits.Remove(sp.Dir)
	}
}

// Launch makes the spare the program argv with files as its descriptors
// 0, 1, 2, 3 …; stdin is what it reads on 0 (nil: nothing). The caller
// waits for it through sp.Cmd, as for a command it started.
func (sp *Spare) Launch(argv []string, stdin []byte, files []*os.File) error {
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
