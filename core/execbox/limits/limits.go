// Package limits holds the kernel's means by which execbox bounds what a
// command may use: resource limits (prlimit on the sandbox's init, before
// it starts the command, soft and hard alike so nothing inside can raise
// them) and cgroups (pids and memory, v2 or v1, one child cgroup per run
// under this process's own cgroup), and Proc, which of them bounds the
// number of processes here.
//
// # What it guarantees, and what not
//
// FindCgroup returns a controller only after it has made, limited and
// removed a child cgroup there once (a probe), and then removes what
// earlier Corral processes that are gone left behind, killing what still
// ran in it. Make either makes every cgroup asked for, each with its
// limit written, or none. Remove waits up to a second for the last tasks
// to leave. Apply stops at the first limit the kernel refuses.
//
// Not guaranteed: that a cgroup exists at all (it needs a delegated one,
// such as root's or a systemd service's with Delegate=yes; FindCgroup
// says why not), that swap is bounded where the kernel does not account
// it, or that RLIMIT_NPROC counts only the sandbox's tasks before Linux
// 5.14 (CountTasks adds the owner's own, counted once, when the limit is
// set). Which limits a run gets, and when, is execbox's to say (its
// run_linux.go).
// On systems other than Linux there are no limits: FindCgroup refuses and
// Proc.Describe says so.
package limits

// Proc is how the number of processes in a sandbox is bounded.
//
// RLIMIT_NPROC is checked against the real user's count of tasks. Since
// Linux 5.14 that count is kept per user namespace, and bubblewrap gives
// each sandbox its own, so the limit counts only the sandbox's tasks. Before
// 5.14 it counts every task of the owner, so the owner's current count is
// added to the limit. The kernel never applies RLIMIT_NPROC to root (uid 0
// of the initial user namespace), so as root a pids cgroup is used instead
// when one can be created — on kernels before 5.14 only: since then a
// command started as root runs as uid 0 of the asroot helper's user
// namespace (an unprivileged host user, core/execbox/overlay), whose RLIMIT_NPROC
// counts that namespace's tasks (the helper's bubblewrap among them), and
// the pids cgroup, whose join held every start for an RCU grace period,
// is left out.
type Proc struct {
	Root   bool
	PerNS  bool    // RLIMIT_NPROC counted per user namespace
	Cgroup *Cgroup // as root only; nil when none is writable
}

// Rlimit is one resource limit (unix.RLIMIT_*) to set, soft and hard.
type Rlimit struct {
	Resource int
	Value    uint64
}
