package execbox

import (
	"context"
	"fmt"
	"os"
	"time"

	"corral/core/errs"
	"corral/core/execbox/limits"
	"corral/core/paths"
)

// rlimit is a resource limit set on a sandbox's init (plan.rlimits).
type rlimit = limits.Rlimit

// helperPath is where RunHelper shows the helper binary inside the sandbox.
const helperPath = "/helper"

// HelperSpec is one run of a program of Corral's own (such as its
// document reader) on untrusted input. The sandbox holds only the
// read-only system view and the binary: no scope, no shared folder, no
// roots, no network, and no writable folder at all (/tmp and /dev/shm are
// read-only too). Input comes on standard input, output leaves on
// standard output.
type HelperSpec struct {
	Binary    string            // absolute host path of the executable; shown read-only at /helper
	Args      []string          // arguments after the program name
	Env       map[string]string // added to PATH, HOME (/), LANG, TERM
	Stdin     []byte
	Timeout   time.Duration // wall time; 0 = DefaultTimeout
	MaxOutput int           // bytes kept per stream; 0 = DefaultMaxOutput
	Limits    HelperLimits
}

// HelperLimits bound one helper run. A zero field takes its default.
type HelperLimits struct {
	Memory       int64         // data segment (RLIMIT_DATA); default 512 MiB
	AddressSpace int64         // address space (RLIMIT_AS); default 2 GiB
	CPUTime      time.Duration // CPU time (RLIMIT_CPU, whole seconds, rounded up); default 30 s
	Procs        int           // processes and threads; default 64
	OpenFiles    int           // open files (RLIMIT_NOFILE); default 64
}

// RunHelper runs spec.Binary in a sandbox of its own, as Run runs a
// command, and waits for it. Errors are *errs.Error (Unavailable without
// bubblewrap, IO when the sandbox could not be set up); a helper that
// fails, is killed at a limit or times out is a Result: SIGXCPU or SIGKILL
// at RLIMIT_CPU, TimedOut at the wall time.
func (r *Runner) RunHelper(ctx context.Context, s HelperSpec) (Result, error) {
	if err := r.Ready(); err != nil {
		return Result{}, err
	}
	if !paths.IsCleanAbs(s.Binary) {
		return Result{}, fmt.Errorf("execbox: helper binary %q is not an absolute, clean path", s.Binary)
	}
	bin := paths.Resolved(s.Binary)
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() {
		return Result{}, errs.Wrap(err, errs.Unavailable, "", "Corral's helper program is missing, so the document could not be read.")
	}
	envKeys, err := checkEnv(s.Env)
	if err != nil {
		return Result{}, err
	}
	a := []string{r.bwrap}
	a = append(a, r.baseArgs("/")...)
	for _, k := range envKeys {
		a = append(a, "--setenv", k, s.Env[k])
	}
	binIdx := len(a) + 1
	a = append(a, "--ro-bind", bin, helperPath,
		"--remount-ro", "/tmp", "--remount-ro", "/dev/shm", "--remount-ro", "/",
		"--chdir", "/", "--", helperPath)
	a = append(a, s.Args...)

	l := s.Limits.withDefaults()
	p := &plan{
		argv:      a,
		files:     r.identity("agent"),
		stdin:     s.Stdin,
		timeout:   s.Timeout,
		maxOutput: s.MaxOutput,
		rlimits:   r.helperRlimits(l),
		readonly:  []int{binIdx},
		procs:     l.Procs,
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.maxOutput <= 0 {
		p.maxOutput = DefaultMaxOutput
	}
	if err := ctx.Err(); err != nil {
		return Result{}, errs.Wrap(err, errs.IO, "", "The helper was cancelled before it started.")
	}
	return r.exec(ctx, p)
}

func (l HelperLimits) withDefaults() HelperLimits {
	if l.Memory <= 0 {
		l.Memory = 512 << 20
	}
	if l.AddressSpace <= 0 {
		l.AddressSpace = 2 << 30
	}
	if l.CPUTime <= 0 {
		l.CPUTime = 30 * time.Second
	}
	if l.Procs <= 0 {
		l.Procs = 64
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = 64
	}
	return l
}
