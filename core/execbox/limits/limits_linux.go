package limits

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/paths"
)

func FindProc(uid int, log *slog.Logger) Proc {
	p := Proc{Root: uid == 0, PerNS: KernelAtLeast(5, 14)}
	if p.Root {
		cg, err := FindCgroup("pids")
		if err != nil {
			log.Debug("execbox: no pids cgroup", "err", err)
		} else {
			p.Cgroup = cg
		}
	}
	return p
}

// Describe says how a limit of n processes is enforced, for logs and
// diagnostics (n < 0: none).
func (p Proc) Describe(n int) string {
	switch {
	case n < 0:
		return "none (disabled)"
	case p.Root && p.PerNS:
		return fmt.Sprintf("RLIMIT_NPROC=%d, counted per sandbox (commands run as an unprivileged user's namespace, not as root)", n)
	case p.Cgroup != nil && p.Cgroup.v2:
		return fmt.Sprintf("pids cgroup v2 under %s (pids.max=%d)", p.Cgroup.parent, n)
	case p.Cgroup != nil:
		return fmt.Sprintf("pids cgroup v1 under %s (pids.max=%d)", p.Cgroup.parent, n)
	case p.Root:
		return "none (root, no writable pids cgroup; RLIMIT_NPROC does not apply to root)"
	case p.PerNS:
		return fmt.Sprintf("RLIMIT_NPROC=%d, counted per sandbox", n)
	default:
		return fmt.Sprintf("RLIMIT_NPROC=%d on top of the owner's own processes (kernel before 5.14)", n)
	}
}

// Apply sets soft and hard limits on pid (the sandbox's init, still
// blocked before it starts the command), so nothing inside can raise them.
func Apply(pid int, ls []Rlimit) error {
	for _, l := range ls {
		v := unix.Rlimit{Cur: l.Value, Max: l.Value}
		if err := unix.Prlimit(pid, l.Resource, &v, nil); err != nil {
			return fmt.Errorf("prlimit %d on %d: %w", l.Resource, pid, err)
		}
	}
	return nil
}

// KernelAtLeast reports whether the running kernel is at least major.minor.
func KernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// CountTasks counts the tasks (threads) whose real user is uid.
func CountTasks(uid int) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := strconv.Itoa(uid)
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var realUID string
		threads := 1
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					realUID = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				if t, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					threads = t
				}
			}
		}
		if realUID == want {
			n += threads
		}
	}
	return n
}

// Cgroup is one cgroup controller (pids or memory) in which a child
// cgroup with a limit is made per run.
type Cgroup struct {
	controller string // "pids" or "memory"
	parent     string // folder in which the per-run cgroups are created
	v2         bool
}

// limitFile is the file that holds the controller's limit.
func (c *Cgroup) limitFile() string {
	switch {
	case c.controller == "pids":
		return "pids.max"
	case c.v2:
		return "memory.max"
	}
	return "memory.limit_in_bytes"
}

var cgroupSeq atomic.Uint64

// FindCgroup finds controller in this process's own cgroup and checks that
// a child cgroup with a limit can be made there: v2 when the controller is
// enabled for its children, else v1.
func FindCgroup(controller string) (*Cgroup, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var v1Path, v2Path string
	haveV1, haveV2 := false, false
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2Path, haveV2 = f[2], true
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == controller {
				v1Path, haveV1 = f[2], true
			}
		}
	}
	var tried []string
	if haveV2 {
		if dir, ok := cgroupDir(string(mounts), "cgroup2", "", v2Path); ok {
			ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if hasWord(string(ctl), controller) {
				cg := &Cgroup{controller: controller, parent: dir, v2: true}
				err := cg.probe()
				if err == nil {
					cg.sweep()
					return cg, nil
				}
				tried = append(tried, err.Error())
			} else {
				tried = append(tried, "cgroup v2 "+dir+": "+controller+" not enabled for child cgroups")
			}
		}
	}
	if haveV1 {
		if dir, ok := cgroupDir(string(mounts), "cgroup", controller, v1Path); ok {
			cg := &Cgroup{controller: controller, parent: dir}
			err := cg.probe()
			if err == nil {
				cg.sweep()
				return cg, nil
			}
			tried = append(tried, err.Error())
		}
	}
	if len(tried) == 0 {
		return nil, errors.New("no " + controller + " cgroup found")
	}
	return nil, errors.New(strings.Join(tried, "; "))
}

// cgroupDir finds the mount of the given cgroup type (with option opt for
// v1) and returns the folder of cgroup path p in it.
func cgroupDir(mountinfo, fstype, opt, p string) (string, bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || g[0] != fstype {
			continue
		}
		if opt != "" && !hasOpt(g[2], opt) {
			continue
		}
		root, mp := f[3], f[4]
		rel := p
		if root != "/" {
			if !paths.Within(p, root) {
				continue
			}
			rel = strings.TrimPrefix(p, root)
		}
		return filepath.Join(mp, rel), true
	}
	return "", false
}

func hasOpt(opts, want string) bool { return slices.Contains(strings.Split(opts, ","), want) }

func hasWord(s, want string) bool { return slices.Contains(strings.Fields(s), want) }

// sweep removes the cgroups left by earlier Corral processes that are
// gone (a crash skips the per-run cleanup), killing first whatever still
// runs in them: no command outlives its Corral (execbox's spawn_linux.go).
func (c *Cgroup) sweep() {
	dirs, _ := filepath.Glob(filepath.Join(c.parent, "corral-*-*"))
	for _, d := range dirs {
		f := strings.SplitN(filepath.Base(d), "-", 3)
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + f[1]); err == nil {
			continue
		}
		if unix.Rmdir(d) == unix.EBUSY {
			kill(d)
			_ = Remove(d) // waits a moment for the tasks to go
		}
	}
}

// kill sends SIGKILL to every task in the cgroup at dir: at once
// through cgroup.kill where the kernel has it (v2, Linux 5.14), else to
// each pid listed, a few times over in case one forked meanwhile.
func kill(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for range 3 {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}

func (c *Cgroup) probe() error {
	v := int64(1) // one task, or 1 GiB
	if c.controller == "memory" {
		v = 1 << 30
	}
	dirs, err := Make([]Limit{{Ctl: c, Value: v}})
	if err != nil {
		return err
	}
	return Remove(dirs[0])
}

// Limit is a limit to set in a controller's per-run cgroup.
type Limit struct {
	Ctl   *Cgroup
	Value int64
}

// Make makes the per-run cgroups for limits: one folder per
// hierarchy (in cgroup v2, controllers sharing a parent share the folder,
// since a process is in exactly one v2 cgroup), each limit written there.
// The run's init joins every returned folder (Join).
func Make(limits []Limit) (dirs []string, err error) {
	byParent := map[string]string{}
	defer func() {
		if err != nil {
			for _, d := range dirs {
				_ = Remove(d)
			}
			dirs = nil
		}
	}()
	for _, l := range limits {
		dir, ok := byParent[l.Ctl.parent]
		if !ok {
			dir = filepath.Join(l.Ctl.parent, fmt.Sprintf("corral-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
			if err := os.Mkdir(dir, 0o755); err != nil {
				return dirs, fmt.Errorf("create cgroup: %w", err)
			}
			byParent[l.Ctl.parent] = dir
			dirs = append(dirs, dir)
		}
		if err := os.WriteFile(filepath.Join(dir, l.Ctl.limitFile()), []byte(strconv.FormatInt(l.Value, 10)), 0); err != nil {
			return dirs, fmt.Errorf("set %s: %w", l.Ctl.limitFile(), err)
		}
		if l.Ctl.controller == "memory" {
			// No swapping past the limit, where swap is accounted at all.
			if l.Ctl.v2 {
				_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
			} else {
				_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(l.Value, 10)), 0)
			}
		}
	}
	return dirs, nil
}

// Join moves pid into the cgroup at dir.
func Join(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// Remove removes an emptied cgroup, waiting briefly for the last
// tasks to leave it.
func Remove(dir string) error {
	var err error
	for range 100 {
		if err = unix.Rmdir(dir); err == nil || err == unix.ENOENT {
			return nil
		}
		if err != unix.EBUSY {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}

// Holds reports whether pid is listed in the cgroup at dir.
func Holds(dir string, pid int) bool {
	b, err := os.ReadFile(dir + "/cgroup.procs")
	if err != nil {
		return false
	}
	return slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid))
}
