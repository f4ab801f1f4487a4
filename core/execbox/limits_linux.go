package execbox

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

// procLimit is how the number of processes in a sandbox is bounded.
//
// RLIMIT_NPROC is checked against the real user's count of tasks. Since
// Linux 5.14 that count is kept per user namespace, and bubblewrap gives
// each sandbox its own, so the limit counts only the sandbox's tasks. Before
// 5.14 it counts every task of the owner, so the owner's current count is
// added to the limit. The kernel never applies RLIMIT_NPROC to root (uid 0
// of the initial user namespace), so as root a pids cgroup is used instead
// when one can be created — on kernels before 5.14 only: since then a
// command started as root runs as uid 0 of the asroot helper's user
// namespace (an unprivileged host user, overlay.go), whose RLIMIT_NPROC
// counts that namespace's tasks (the helper's bubblewrap among them), and
// the pids cgroup, whose join held every start for an RCU grace period,
// is left out.
type procLimit struct {
	root   bool
	perNS  bool       // RLIMIT_NPROC counted per user namespace
	cgroup *cgroupCtl // as root only; nil when none is writable
}

func findProcLimit(uid int, log *slog.Logger) procLimit {
	p := procLimit{root: uid == 0, perNS: kernelAtLeast(5, 14)}
	if p.root {
		cg, err := findCgroup("pids")
		if err != nil {
			log.Debug("execbox: no pids cgroup", "err", err)
		} else {
			p.cgroup = cg
		}
	}
	return p
}

func (p procLimit) describe(n int) string {
	switch {
	case n < 0:
		return "none (disabled)"
	case p.root && p.perNS:
		return fmt.Sprintf("RLIMIT_NPROC=%d, counted per sandbox (commands run as an unprivileged user's namespace, not as root)", n)
	case p.cgroup != nil && p.cgroup.v2:
		return fmt.Sprintf("pids cgroup v2 under %s (pids.max=%d)", p.cgroup.parent, n)
	case p.cgroup != nil:
		return fmt.Sprintf("pids cgroup v1 under %s (pids.max=%d)", p.cgroup.parent, n)
	case p.root:
		return "none (root, no writable pids cgroup; RLIMIT_NPROC does not apply to root)"
	case p.perNS:
		return fmt.Sprintf("RLIMIT_NPROC=%d, counted per sandbox", n)
	default:
		return fmt.Sprintf("RLIMIT_NPROC=%d on top of the owner's own processes (kernel before 5.14)", n)
	}
}

type rlimit struct {
	resource int
	value    uint64
}

// rlimits returns the limits to set on the sandbox's init.
func (r *Runner) rlimits() []rlimit {
	l := r.limits
	out := []rlimit{{unix.RLIMIT_CORE, 0}}
	if l.Procs > 0 {
		n := uint64(l.Procs)
		if !r.procs.root && !r.procs.perNS {
			n += uint64(countTasks(r.uid))
		}
		out = append(out, rlimit{unix.RLIMIT_NPROC, n})
	}
	if l.FileSize > 0 {
		out = append(out, rlimit{unix.RLIMIT_FSIZE, uint64(l.FileSize)})
	}
	if l.Memory > 0 {
		out = append(out, rlimit{unix.RLIMIT_DATA, uint64(l.Memory)})
	}
	if l.AddressSpace > 0 {
		out = append(out, rlimit{unix.RLIMIT_AS, uint64(l.AddressSpace)})
	}
	if l.OpenFiles > 0 {
		out = append(out, rlimit{unix.RLIMIT_NOFILE, uint64(l.OpenFiles)})
	}
	return out
}

// applyRlimits sets soft and hard limits on pid (the sandbox's init, still
// blocked before it starts the command), so nothing inside can raise them.
func applyRlimits(pid int, ls []rlimit) error {
	for _, l := range ls {
		v := unix.Rlimit{Cur: l.value, Max: l.value}
		if err := unix.Prlimit(pid, l.resource, &v, nil); err != nil {
			return fmt.Errorf("prlimit %d on %d: %w", l.resource, pid, err)
		}
	}
	return nil
}

// kernelAtLeast reports whether the running kernel is at least major.minor.
func kernelAtLeast(major, minor int) bool {
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

// countTasks counts the tasks (threads) whose real user is uid.
func countTasks(uid int) int {
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

// cgroupCtl is one cgroup controller (pids or memory) in which a child
// cgroup with a limit is made per run.
type cgroupCtl struct {
	controller string // "pids" or "memory"
	parent     string // folder in which the per-run cgroups are created
	v2         bool
}

// limitFile is the file that holds the controller's limit.
func (c *cgroupCtl) limitFile() string {
	switch {
	case c.controller == "pids":
		return "pids.max"
	case c.v2:
		return "memory.max"
	}
	return "memory.limit_in_bytes"
}

var cgroupSeq atomic.Uint64

// findCgroup finds controller in this process's own cgroup and checks that
// a child cgroup with a limit can be made there: v2 when the controller is
// enabled for its children, else v1.
func findCgroup(controller string) (*cgroupCtl, error) {
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
				cg := &cgroupCtl{controller: controller, parent: dir, v2: true}
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
			cg := &cgroupCtl{controller: controller, parent: dir}
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
// runs in them: no command outlives its Corral (spawn.go).
func (c *cgroupCtl) sweep() {
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
			killCgroup(d)
			_ = removeCgroup(d) // waits a moment for the tasks to go
		}
	}
}

// killCgroup sends SIGKILL to every task in the cgroup at dir: at once
// through cgroup.kill where the kernel has it (v2, Linux 5.14), else to
// each pid listed, a few times over in case one forked meanwhile.
func killCgroup(dir string) {
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

func (c *cgroupCtl) probe() error {
	v := int64(1) // one task, or 1 GiB
	if c.controller == "memory" {
		v = 1 << 30
	}
	dirs, err := makeCgroups([]cgroupLimit{{c, v}})
	if err != nil {
		return err
	}
	return removeCgroup(dirs[0])
}

// cgroupLimit is a limit to set in a controller's per-run cgroup.
type cgroupLimit struct {
	ctl   *cgroupCtl
	value int64
}

// makeCgroups makes the per-run cgroups for limits: one folder per
// hierarchy (in cgroup v2, controllers sharing a parent share the folder,
// since a process is in exactly one v2 cgroup), each limit written there.
// The run's init joins every returned folder (addToCgroup).
func makeCgroups(limits []cgroupLimit) (dirs []string, err error) {
	byParent := map[string]string{}
	defer func() {
		if err != nil {
			for _, d := range dirs {
				_ = removeCgroup(d)
			}
			dirs = nil
		}
	}()
	for _, l := range limits {
		dir, ok := byParent[l.ctl.parent]
		if !ok {
			dir = filepath.Join(l.ctl.parent, fmt.Sprintf("corral-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
			if err := os.Mkdir(dir, 0o755); err != nil {
				return dirs, fmt.Errorf("create cgroup: %w", err)
			}
			byParent[l.ctl.parent] = dir
			dirs = append(dirs, dir)
		}
		if err := os.WriteFile(filepath.Join(dir, l.ctl.limitFile()), []byte(strconv.FormatInt(l.value, 10)), 0); err != nil {
			return dirs, fmt.Errorf("set %s: %w", l.ctl.limitFile(), err)
		}
		if l.ctl.controller == "memory" {
			// No swapping past the limit, where swap is accounted at all.
			if l.ctl.v2 {
				_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
			} else {
				_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(l.value, 10)), 0)
			}
		}
	}
	return dirs, nil
}

// addToCgroup moves pid into the cgroup at dir.
func addToCgroup(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// removeCgroup removes an emptied cgroup, waiting briefly for the last
// tasks to leave it.
func removeCgroup(dir string) error {
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
