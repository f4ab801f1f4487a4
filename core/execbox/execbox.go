// Package execbox runs an agent's shell command inside a bubblewrap sandbox
// (docs/protocol.md section 6, command.run). Nothing here ever runs a command
// outside bubblewrap: where bubblewrap is missing or cannot create its
// namespaces, Run answers errs.Unavailable.
//
// # What a command sees
//
//   - $HOME is the scope folder, bound read-write at /corral/<user> (a fixed
//     path, not the host path, so that pwd never names a host path and no
//     [[sandbox.roots]] entry can land inside $HOME). The shared folder is
//     bound read-write at /share, and $HOME/share is a symbolic link to /share
//     that Run creates on the host side when it is missing. playground/ is a
//     plain folder of the scope, created when missing; it is not a mount.
//   - Spec.Mounts appear at their own host paths, read-only unless ReadWrite.
//   - A read-only system view: /usr and whichever of /bin, /sbin, /lib,
//     /lib32, /lib64, /libx32 exist (symbolic links into /usr are recreated
//     as links), and a curated /etc holding only the entries programs need
//     (dynamic linker cache, certificates, name resolution, alternatives,
//     time zone, locale and MIME tables, os-release …) plus a generated
//     passwd and group naming only the scope's user. The owner's real
//     /etc/passwd, /etc/shadow and the rest of /etc are absent.
//   - A private /proc whose /proc/sys and /proc/sysrq-trigger are
//     read-only, a minimal /dev, and size-limited tmpfs at /tmp and
//     /dev/shm. The root of the sandbox and /dev are read-only.
//   - Absent: the owner's home, Corral's config, database and secrets (they
//     are simply never bound, and a Mount at, inside or around a path in
//     Options.Hidden is refused), every other scope, /run (D-Bus, Wayland and
//     X11 sockets), /sys, /var, /home, /root, /mnt, /media, /opt, /srv
//     (except the empty parent folders leading to a Mount's path).
//
// # Helpers
//
// RunHelper runs a program of Corral's own (its document reader) on
// untrusted bytes in the same kind of sandbox, with less in it: the system
// view and the one binary (read-only at /helper), no scope, no shared
// folder, no roots, no network, no writable folder (/tmp and /dev/shm are
// read-only), and tighter limits of its own (HelperLimits: RLIMIT_DATA,
// RLIMIT_AS, RLIMIT_CPU, processes, open files) besides the wall timeout.
//
// # Overlays (Spec.LayerDir)
//
// With Spec.LayerDir, each writable folder (the scope, the shared folder,
// read-write Mounts) is shown to the command through an overlay (overlayfs
// with userxattr and volatile) whose upper layer lies in LayerDir: the
// command sees the real folder, but everything it writes lands in the
// upper layer (Result.Layers) and the real folder is left as it was until
// the caller applies the layers. The overlays are mounted by
// corral-netinit's overlay mode outside the sandbox, in a user and mount
// namespace of its own (the owner's uid, with capabilities that hold only
// in that namespace), which drops every capability before it becomes
// bubblewrap; the mounts never reach Corral's own mount namespace. As
// root, corral-netinit's asroot mode mounts them instead (see "Who a
// command is"); the upper layers are then owned by the sandbox's
// unprivileged uid, and whoever applies them gives the files to Corral's
// uid (core/commands does, with fsbox.Settle).
//
// Not guaranteed: where overlays cannot be used (no corral-netinit, or the
// kernel refuses them, found by ProbeOverlay or by the first command that
// fails to mount one) the command runs on the real folders and
// Result.NoLayers says why; a command that fails to run returns no Layers;
// what the upper layers hold is bounded per file (RLIMIT_FSIZE), not in
// total.
//
// # Who a command is
//
// A command's processes are never host uid 0 and hold no capability
// outside namespaces of their own, whatever uid Corral runs as:
//
//   - As an ordinary user, the command runs as that user, in bubblewrap's
//     own user namespace (nested user namespaces disabled).
//   - As root (CI, servers, sudo), every sandbox is started by
//     corral-netinit's asroot mode, which runs bubblewrap as uid 0 of a
//     user namespace whose only mapping is 0 → 2147483646 (uid and gid):
//     an unprivileged host user that owns no file and appears in no passwd.
//     The command still sees itself as uid 0 (as it did before), without
//     capabilities; /proc/self/uid_map reads "0 2147483646 1"; setting
//     sysctls and every other root-only interface of the host is refused
//     to it as to any user. That user cannot walk Corral's own folders, so
//     the helper shows bubblewrap each host path it binds (outside the
//     system view) at /sys/N of its private mount namespace, and the
//     writable folders (scope, shared folder, read-write Mounts) as
//     id-mapped mounts with the sandbox's own mapping: files that are
//     root's on disk are the command's, and what the command creates
//     there is root's on disk, owned as Corral's other files are, with no
//     step after the run. This is the defensible choice over a chown after
//     the run (racy, a walk of the whole folder) or giving the folders to
//     the sandbox user (Corral's files would stop being Corral's).
//
// # What is guaranteed
//
//   - bubblewrap with new user (see above), PID, network, IPC, UTS and
//     cgroup namespaces, a new session (no TIOCSTI into the owner's
//     terminal), --die-with-parent, every capability dropped, nested user
//     namespaces disabled where the kernel allows, and --clearenv: the
//     environment is PATH, HOME, LANG, TERM and Spec.Env, nothing from the
//     daemon.
//   - Every command runs in a network namespace of its own whose only
//     interface is lo, a loopback of the sandbox's own: the host's
//     loopback, its abstract Unix sockets (X11, D-Bus), the LAN and the
//     internet are unreachable. The host's network namespace is never
//     shared. With Spec.Egress, the sandbox's first program is
//     corral-netinit (Options.NetInit), which listens on ProxyAddr inside
//     that namespace, hands the listening socket to Run over an inherited
//     Unix socket and then execs /bin/sh; Run accepts the command's
//     connections from outside and passes each to Spec.Egress, at most
//     MaxProxyConns at once (further ones wait in the sandbox's kernel).
//     HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and their lowercase forms)
//     point there. That listener is the command's only way out.
//   - A seccomp filter (core/execbox/seccomp) refuses with EPERM the
//     system calls no ordinary program needs: new namespaces (unshare,
//     setns, clone with CLONE_NEWUSER), io_uring, ptrace and
//     process_vm_*, kernel keyrings, perf_event_open, bpf, userfaultfd,
//     module and kernel loading, mounts,
//     and other ABIs' system calls; a mode with the setuid or setgid bit
//     (chmod and its kin, or a file created with them); and every socket
//     family but AF_INET, AF_INET6 and AF_NETLINK (route and sock_diag
//     only), AF_UNIX included (socketpair still works). Debuggers do not
//     work in the sandbox.
//   - bubblewrap reads its options from a pipe (--args), so the process
//     list that every user of the machine can read shows neither the
//     command's environment values nor host paths.
//   - The command runs as /bin/sh -c -- COMMAND after bubblewrap's "--", so
//     no part of it is ever read as a bubblewrap or shell option.
//   - No mount point is ever created inside a folder an agent can write:
//     every mount point lives in the sandbox's own tmpfs, mounts never nest
//     inside one another, and Mounts may not overlap the system view, /proc,
//     /dev, /share or /corral (only /tmp, fresh in every run, may hold
//     them). Host paths are checked absolute and clean, and Mounts are
//     checked, with symbolic links resolved, not to overlap the scope, the
//     shared folder or Options.Hidden.
//   - At the timeout or when ctx is cancelled the whole tree is killed at
//     once with SIGKILL (the PID namespace's init and bubblewrap itself);
//     when the command exits, everything it left running in the background
//     dies with the PID namespace. No process outlives Run.
//   - Resource limits are set on the sandbox's init before it starts the
//     command (bubblewrap waits on --block-fd until they are in place):
//     RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_NOFILE, RLIMIT_CORE=0, optional
//     RLIMIT_AS, and a process limit. As a normal user the process limit is
//     RLIMIT_NPROC, which Linux 5.14 and later count per user namespace, so
//     it counts only the sandbox's own processes (on older kernels it counts
//     all of the owner's processes, and the owner's current count is added).
//     As root RLIMIT_NPROC does not apply at all; there the process limit is
//     a pids cgroup (v2 when the pids controller is delegated to Corral's
//     cgroup, else v1), one per run. Runner.ProcessLimit says which is in
//     force.
//
// # What is not guaranteed
//
//   - The sandbox shares the kernel: a kernel or bubblewrap bug is an escape.
//   - As root, the writable folders must be on a file system that supports
//     id-mapped mounts (Linux 5.12 or later; ext4, xfs, btrfs, tmpfs …);
//     elsewhere commands fail with errs.Unavailable and a sentence. Files
//     there owned on disk by another uid than root show as nobody and are
//     used with their "other" permission bits, as are read-only Mounts,
//     corral-netinit and every other host path (they are not id-mapped).
//     Every command then runs as the same host uid (2147483646); they
//     cannot reach one another (separate PID, IPC and network namespaces,
//     nothing writable in common but the folders they share on purpose).
//     Without corral-netinit Corral, as root, runs no command and no
//     helper (Available says why). Plain, which exists for benchmarks
//     only, starts bubblewrap directly: as root, its command is root.
//   - Setuid and setgid bits: the seccomp filter refuses them at the
//     source on every path, and core/commands and core/fsbox clear them on
//     what they put in place; a file of the owner's that already had them
//     keeps them until an agent rewrites or moves it.
//   - CPU time is bounded only by the timeout; disk use in read-write folders
//     is bounded per file (RLIMIT_FSIZE), not in total; memory per process
//     (RLIMIT_DATA) and per tmpfs, and for the command as a whole
//     (Limits.Total) only where a memory cgroup can be made (as root, or in a
//     delegated cgroup v2 with the memory controller enabled). As root a
//     command usually starts from a spare made ahead of time (spare_linux.go),
//     already in its memory cgroup: the helper that starts the sandbox
//     (a few MiB) counts towards Limits.Total too.
//   - As root before Linux 5.14 without a writable pids cgroup there is no
//     process limit other than the timeout (NewRunner logs a warning).
//   - What a connection handed to Spec.Egress may reach is Spec.Egress's
//     business (core/netgate decides, app/egress speaks the protocols).
//     Programs that ignore the proxy variables simply get no network.
//   - A Unix socket file inside a Mount or the scope would reach whatever
//     program on the host listens on it (read-only mounts do not stop
//     connect()); only the seccomp filter's refusal to create Unix sockets
//     keeps commands from it. A socket passed in some other way (none is)
//     would not be covered.
//   - The sandbox can read some facts about the host: kernel version, CPU and
//     memory figures, and in /proc/self/mountinfo the host paths of the
//     folders bound into it (the scope folder's included).
//   - bubblewrap reports a command killed by signal N as exit code 128+N, the
//     same as a command that calls exit 128+N; Run reads every such code as
//     the signal (as shells do).
//   - Output is returned as raw bytes; it is cut at Spec.MaxOutput, and only
//     there does Run avoid splitting a UTF-8 sequence.
package execbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corral/core/errs"
	"corral/core/execbox/limits"
	"corral/core/execbox/overlay"
	"corral/core/execbox/seccomp"
	"corral/core/execbox/userns"
	"corral/core/paths"
)

// Mount is a [[sandbox.roots]] entry, mounted at its own host path.
type Mount struct {
	Host      string // absolute, clean host path; also the path inside the sandbox
	ReadWrite bool
}

// Spec is one command to run.
type Spec struct {
	Command    string  // run as /bin/sh -c -- Command
	ScopeDir   string  // host folder of the scope; $HOME (/corral/<User>) inside
	ShareDir   string  // host shared folder; /share inside ("" = none)
	ShareLink  string  // name of the link in $HOME to /share; "" = "share"
	WorkingDir string  // relative to $HOME ("playground" = $HOME/playground), "~/…", or absolute inside $HOME, /share or a Mount; "" = $HOME
	Mounts     []Mount // [[sandbox.roots]] entries
	// Egress, if set, gives the command network through Corral's egress
	// proxy: it is called, on its own goroutine, with every connection the
	// command opens to ProxyAddr inside its sandbox, and must return once
	// its ctx ends (Run cancels it when the command has ended and waits for
	// every call to return). Nil: no network at all.
	Egress    func(ctx context.Context, c net.Conn)
	Env       map[string]string // added to PATH, HOME, LANG, TERM
	Stdin     []byte            // fed, then closed; empty = /dev/null
	Timeout   time.Duration     // wall time; 0 = DefaultTimeout
	MaxOutput int               // bytes kept per stream; 0 = DefaultMaxOutput
	// OnOutput, if set, receives output as it arrives, in order per stream,
	// before Run returns. Calls are never concurrent. A chunk never ends in
	// the middle of a UTF-8 sequence unless the program's output does.
	OnOutput func(stream string, data []byte)
	User     string // scope name: the passwd entry and $HOME's last element; "" = "agent"
	// LayerDir, if set, is a folder in Corral's own data folder (never in
	// the sandbox base or anywhere an agent reaches) under which each
	// writable folder (the scope, the shared folder, read-write Mounts) is
	// given an overlay for this run: the command sees the real folder but
	// everything it creates, changes or deletes lands in an upper layer
	// there (Result.Layers), and the real folder is left untouched. The
	// caller applies the layers after Run returns (see Layer) and removes
	// LayerDir. Where overlays cannot be used (Runner.Overlay), the command
	// runs on the real folders and Result.NoLayers says why.
	LayerDir string
}

// Layer is what a command wrote into one writable folder, when it ran
// with Spec.LayerDir. Upper holds overlayfs's upper layer (with
// userxattr): new and changed files and folders with their content and
// mode, a character device 0:0 (a whiteout) for each deleted entry, and
// the extended attribute user.overlay.opaque = "y" on a folder that
// replaced the folder of that name (its earlier content is gone).
type Layer struct {
	Host  string // the folder as Spec named it: ScopeDir, ShareDir or a Mount's Host
	Upper string // the upper layer, inside Spec.LayerDir
}

// Result is what a command did.
type Result struct {
	ExitCode  int    // 128+N when killed by signal N
	Signal    string // "SIGKILL", "SIGXFSZ" …, or "" after a normal exit
	Stdout    string
	Stderr    string
	Truncated bool // some output was dropped at MaxOutput
	TimedOut  bool // killed at Spec.Timeout
	Cancelled bool // killed because ctx was cancelled (command.cancel)
	Duration  time.Duration
	Layers    []Layer // with Spec.LayerDir: the upper layer of each writable folder
	NoLayers  string  // with Spec.LayerDir but no overlay: why (the command wrote to the real folders)
}

// Limits bound what one command may use. A zero field takes its default;
// a negative one removes the limit.
type Limits struct {
	Procs        int   // processes and threads (RLIMIT_NPROC or pids.max); default 1024
	FileSize     int64 // largest file written, in bytes (RLIMIT_FSIZE); default 1 GiB
	Memory       int64 // data segment per process, in bytes (RLIMIT_DATA); default 4 GiB
	AddressSpace int64 // address space per process, in bytes (RLIMIT_AS); default none
	OpenFiles    int   // open files per process (RLIMIT_NOFILE); default 4096
	TmpSize      int64 // size of /tmp and of /dev/shm, in bytes; default 512 MiB
	// Total is the memory of the whole command, every process and its
	// /tmp and /dev/shm pages together, in bytes: a memory cgroup where
	// one can be made (Runner.MemoryLimit says); default 2 GiB.
	Total int64
}

// Options configure a Runner.
type Options struct {
	Bwrap  string   // path to bwrap; "" = look up "bwrap" in PATH
	Limits Limits   // resource limits for every command
	Hidden []string // host paths never to show: Corral's config and data folders, the sandbox base
	// Etc lists extra entries of /etc to show read-only (names or globs
	// relative to /etc, such as "java-*"), on top of the curated list.
	Etc []string
	// NetInit is the path of the corral-netinit program that gives a
	// command with Spec.Egress its proxy listener; "" = commands get no
	// network (Run refuses Spec.Egress with errs.Unavailable).
	NetInit string
	Logger  *slog.Logger // nil = discard
}

// Runner runs commands in sandboxes. It is created once and is safe for
// concurrent use.
type Runner struct {
	bwrap    string
	version  string
	ok       bool
	why      string
	log      *slog.Logger
	limits   Limits
	hidden   []string
	sysArgs  []string // system view: /usr, /bin …, /etc entries
	nsArgs   []string // namespace flags found to work
	netinit  string   // corral-netinit, or "" when commands get no network
	netWhy   string   // why netinit is "", for the owner
	seccomp  []byte   // the filter bwrap loads, or nil on an architecture without one
	uid, gid int
	asRoot   bool // Corral runs as root: sandboxes start through corral-netinit asroot (package overlay)
	procs    limits.Proc
	memory   *limits.Cgroup // nil: no memory cgroup could be made

	ovMu  sync.Mutex
	ovWhy string // why overlays are not used; "" = they are (or were not tried yet)

	spares      chan *spare // at most one, ready for the next run (spare_linux.go)
	makingSpare atomic.Bool
}

// What a Spec or HelperSpec that leaves its limits zero gets. The caller
// that runs agents' commands (core/commands) sets both from the owner's
// config, so each limit is configured in one place.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultMaxOutput = 1 << 20
	smokeTimeout     = 20 * time.Second
)

// NewRunner finds bubblewrap, checks once that it can create a sandbox, and
// returns a Runner. A missing or broken bubblewrap is not an error: the
// Runner then reports it through Available and Run answers errs.Unavailable.
// The error is for invalid Options only.
func NewRunner(opts Options) (*Runner, error) {
	r := &Runner{
		spares: make(chan *spare, 1),
		log:    opts.Logger,
		limits: opts.Limits.withDefaults(),
		uid:    os.Getuid(),
		gid:    os.Getgid(),
	}
	r.asRoot = r.uid == 0
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if why := platformWhy(); why != "" {
		r.why = why
		r.log.Warn("execbox: commands unavailable on this system", "os", runtime.GOOS)
		return r, nil
	}
	for _, h := range opts.Hidden {
		if !paths.IsCleanAbs(h) {
			return nil, fmt.Errorf("execbox: hidden path %q is not absolute and clean", h)
		}
		r.hidden = append(r.hidden, paths.Resolved(h))
	}
	if err := r.findNetInit(opts.NetInit); err != nil {
		r.netWhy = "Network for commands is unavailable: " + err.Error()
		r.log.Warn("execbox: commands get no network", "err", err)
	}
	r.seccomp = seccomp.Filter()
	if r.seccomp == nil {
		r.log.Warn("execbox: no seccomp filter for this architecture; commands run without one", "arch", runtime.GOARCH)
	}
	sys, err := systemView(opts.Etc)
	if err != nil {
		return nil, err
	}
	r.sysArgs = sys

	r.bwrap = opts.Bwrap
	if r.bwrap == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			r.why = "Commands are unavailable: bubblewrap is not installed. Install the 'bubblewrap' package (sudo apt install bubblewrap) and restart Corral."
			r.log.Warn("execbox: bubblewrap not found", "err", err)
			return r, nil
		}
		r.bwrap = p
	}
	if !filepath.IsAbs(r.bwrap) {
		p, err := filepath.Abs(r.bwrap)
		if err != nil {
			return nil, fmt.Errorf("execbox: bwrap path: %w", err)
		}
		r.bwrap = p
	}
	if err := r.probe(); err != nil {
		r.log.Warn("execbox: commands unavailable", "err", err, "path", r.bwrap)
		return r, nil
	}
	r.ok = true
	r.log.Info("execbox: sandbox ready", "version", r.version, "path", r.bwrap, "process_limit", r.procs.Describe(r.limits.Procs))
	if r.uid == 0 && !r.procs.PerNS && r.procs.Cgroup == nil && r.limits.Procs > 0 {
		r.log.Warn("execbox: running as root without a writable pids cgroup: commands have no process limit (RLIMIT_NPROC does not apply to root)")
	}
	return r, nil
}

// probe runs bwrap --version and a smoke test, choosing the namespace flags.
func (r *Runner) probe() error {
	out, err := runQuiet(r.bwrap, "--version")
	if err != nil {
		r.why = fmt.Sprintf("Commands are unavailable: bubblewrap at %s does not run. Reinstall the 'bubblewrap' package (sudo apt install --reinstall bubblewrap) and restart Corral.", r.bwrap)
		return fmt.Errorf("bwrap --version: %w: %s", err, out)
	}
	r.version = strings.TrimSpace(firstLine(out))
	if !strings.HasPrefix(r.version, "bubblewrap ") {
		r.version = "bubblewrap " + r.version
	}

	if r.asRoot && r.netinit == "" {
		r.why = "Commands are unavailable: Corral runs as root, and it runs commands as an unprivileged user through its corral-netinit program, which is missing. Reinstall Corral, or run it as an ordinary user."
		return errors.New("root without corral-netinit")
	}
	r.procs = limits.FindProc(r.uid, r.log)
	if r.limits.Total > 0 {
		if cg, err := limits.FindCgroup("memory"); err == nil {
			r.memory = cg
		} else {
			r.log.Info("execbox: no memory cgroup; memory is limited per process only", "err", err)
		}
	}
	// Prefer a user namespace with nested user namespaces disabled; fall
	// back to plain --unshare-all where the kernel refuses either.
	candidates := [][]string{
		{"--unshare-all", "--unshare-user", "--disable-userns"},
		{"--unshare-all"},
	}
	if r.asRoot {
		// bubblewrap runs as uid 0 of the user namespace corral-netinit
		// made (0 → dropID), which refuses nested ones: it must not make
		// another.
		candidates = [][]string{{"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"}}
	}
	var last error
	for _, ns := range candidates {
		r.nsArgs = ns
		last = r.smoke()
		if last == nil {
			return nil
		}
		r.log.Debug("execbox: smoke test failed", "err", last, "flags", strings.Join(ns, " "))
	}
	r.nsArgs = nil
	if why := userns.Refused(r.bwrap); why != "" {
		r.why = why
		return last
	}
	r.why = "Commands are unavailable: bubblewrap is installed but cannot create a sandbox on this computer. Allow unprivileged user namespaces (on Debian: sudo sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later: an AppArmor profile that lets bwrap use them) and restart Corral."
	return last
}

// smoke runs `true` in a sandbox with the full system view, through the same
// path as Run (limits and cgroup included).
func (r *Runner) smoke() error {
	argv := append([]string{r.bwrap}, r.baseArgs("/")...)
	argv = append(argv, "--remount-ro", "/", "--chdir", "/", "--", "/bin/sh", "-c", "--", "exit 0")
	p := &plan{argv: argv, files: r.identity("agent"), timeout: smokeTimeout, maxOutput: 4096}
	// NewRunner has no context of its own; the smoke test is bounded by smokeTimeout.
	res, err := r.exec(context.Background(), p)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || res.Signal != "" {
		return fmt.Errorf("smoke test exited %d %s: %s", res.ExitCode, res.Signal, strings.TrimSpace(res.Stderr))
	}
	return nil
}

// Available reports whether commands can run, bubblewrap's version
// ("bubblewrap 0.8.0"), and otherwise a sentence telling the owner what to
// install or change.
func (r *Runner) Available() (ok bool, version string, why string) {
	return r.ok, r.version, r.why
}

// Ready is the one check that commands can run here: nil, or
// errs.Unavailable with the sentence Available gives. Run and RunHelper
// make it; a caller that decides about a command first makes it before
// asking.
func (r *Runner) Ready() error {
	if !r.ok {
		return errs.New(errs.Unavailable, "", "%s", r.why)
	}
	return nil
}

// Network reports whether commands can be given network (Spec.Egress),
// and otherwise a sentence saying why not.
func (r *Runner) Network() (ok bool, why string) {
	if !r.ok {
		return false, r.why
	}
	return r.netinit != "", r.netWhy
}

// findNetInit checks the corral-netinit program.
func (r *Runner) findNetInit(p string) error {
	if p == "" {
		return errors.New("Corral was started without its corral-netinit program.")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is missing or not executable; reinstall Corral.", abs)
	}
	r.netinit = abs
	return nil
}

// MemoryLimit says how a command's memory is bounded, for session.info.
func (r *Runner) MemoryLimit() string {
	if r.memory != nil && r.limits.Total > 0 {
		return fmt.Sprintf("%d MiB for the whole command (a memory cgroup), and %d MiB per process", r.limits.Total>>20, r.limits.Memory>>20)
	}
	return fmt.Sprintf("%d MiB per process only: Corral could not make a memory cgroup here (it needs a delegated cgroup, such as root's or a systemd service's with Delegate=yes), so a command's processes together are not bounded", r.limits.Memory>>20)
}

// ProcessLimit describes how the process limit is enforced, for logs and
// diagnostics: a pids cgroup, RLIMIT_NPROC, or none.
func (r *Runner) ProcessLimit() string { return r.procs.Describe(r.limits.Procs) }

// Run runs s.Command in a fresh sandbox and waits for it. Cancelling ctx
// (command.cancel) kills the whole tree at once and returns what was
// captured with Cancelled set. Errors are *errs.Error: Unavailable when
// bubblewrap cannot run, InvalidParams, Denied or TooLarge for a bad Spec,
// IO when the sandbox could not be set up; a command that fails, times out
// or is killed is a Result, not an error.
func (r *Runner) Run(ctx context.Context, s Spec) (Result, error) {
	if err := r.Ready(); err != nil {
		return Result{}, err
	}
	p, err := r.plan(s, true)
	if err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		// Cancelled (command.cancel, or its caller gone) between being
		// listed and starting: the same answer as a cancel a moment later,
		// with nothing run.
		return Result{Cancelled: true}, nil
	}
	if s.LayerDir == "" {
		return r.exec(ctx, p)
	}
	if ok, why := r.Overlay(); !ok {
		res, err := r.exec(ctx, p)
		res.NoLayers = why
		return res, err
	}
	layers, err := p.layer(s.LayerDir)
	if err == nil && r.asRoot {
		// overlayfs creates with the caller's ids: the upper layers are
		// the command's (core/execbox/overlay).
		for _, l := range layers {
			if err = os.Lchown(l.Upper, overlay.DropID, overlay.DropID); err != nil {
				RemoveLayers(s.LayerDir)
				break
			}
		}
	}
	if err != nil {
		r.log.Warn("execbox: no overlay for this command", "err", err)
		res, err2 := r.exec(ctx, p)
		res.NoLayers = "Corral could not prepare the overlay for this command, so what it changed was not recorded."
		return res, err2
	}
	res, err := r.exec(ctx, p)
	if errors.Is(err, overlay.ErrHelper) {
		// The helper refused before anything ran: the kernel will not
		// mount the overlay. Run on the real folders from now on.
		r.log.Warn("execbox: overlays unavailable; commands' changes are not recorded", "err", err)
		r.setOverlayWhy("The kernel refused the overlay Corral uses to record what commands change, so their changes are not recorded and cannot be undone.")
		RemoveLayers(s.LayerDir)
		p.unlayer()
		res, err = r.exec(ctx, p)
		_, res.NoLayers = r.Overlay()
		return res, err
	}
	if err == nil {
		res.Layers = layers
	}
	return res, err
}

// Argv returns the bwrap argv Run would execute for s, without touching the
// scope folder. The command expects /etc/passwd and /etc/group contents on
// file descriptors 3 and 4, writes its --info-fd JSON to 5 and waits on
// --block-fd 6.
func (r *Runner) Argv(s Spec) ([]string, error) {
	if r.bwrap == "" {
		return nil, errs.New(errs.Unavailable, "", "%s", r.why)
	}
	p, err := r.plan(s, false)
	if err != nil {
		return nil, err
	}
	return p.argv, nil
}

func (l Limits) withDefaults() Limits {
	if l.Procs == 0 {
		l.Procs = 1024
	}
	if l.FileSize == 0 {
		l.FileSize = 1 << 30
	}
	if l.Memory == 0 {
		l.Memory = 4 << 30
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = 4096
	}
	if l.TmpSize == 0 {
		l.TmpSize = 512 << 20
	}
	if l.Total == 0 {
		l.Total = 2 << 30
	}
	return l
}

// runQuiet runs a short helper command with an empty environment and a
// bounded run time, returning its combined output.
func runQuiet(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = []string{}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t := time.AfterFunc(smokeTimeout, func() { _ = cmd.Process.Kill() })
	defer t.Stop()
	err := cmd.Wait()
	return out.String(), err
}

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}

// Plain returns the bubblewrap command Run would start for s, ready to
// run with os/exec but without Corral's bookkeeping: no resource limits,
// no cgroup, no output capture. It exists so benchmarks can measure Run
// against bubblewrap alone; it does not create the playground or the share
// link (Run does). As root it does not drop to the sandbox's unprivileged
// user either: never use it for an agent's command. The returned cleanup
// closes the descriptors.
func (r *Runner) Plain(s Spec) (*exec.Cmd, func(), error) {
	argv, err := r.Argv(s)
	if err != nil {
		return nil, nil, err
	}
	files := r.identity(s.User)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	var open []*os.File
	filled := func(data []byte) (*os.File, error) {
		rd, wr, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		open = append(open, rd)
		_, err = wr.Write(data)
		wr.Close()
		return rd, err
	}
	cleanup := func() {
		devnull.Close()
		for _, f := range open {
			f.Close()
		}
	}
	passwd, err1 := filled(files[0])
	group, err2 := filled(files[1])
	block, err3 := filled([]byte{1})
	filter, err4 := filled(r.seccomp)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		cleanup()
		return nil, nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{passwd, group, devnull, block, devnull, filter} // fds 3–8, as Run has them (7: no --args here)
	return cmd, cleanup, nil
}
