package execbox

import (
	"sync/atomic"
	"time"

	"corral/core/execbox/spares"
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
// counted per user namespace (limits.Proc).
//
// Not guaranteed: a spare unused for spareIdle is let go, so the first
// command after a quiet spell pays the grace period again; a spare whose
// Corral is killed dies with it (Pdeathsig), and its empty cgroup is
// removed by the next Corral's sweep (limits.FindCgroup).
//
// The spare itself (its start, cgroup, hand-over and end) is in
// core/execbox/spares; the Runner keeps at most one (r.spares).
type spare = spares.Spare

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
		if time.Since(sp.Made) < spareIdle && sp.Alive() {
			return sp
		}
		go sp.Discard()
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
						sp.Discard()
						return
					}
					select {
					case r.spares <- old: // a newer one: keep it
					default:
						old.Discard()
					}
				default:
				}
			})
		default:
			sp.Discard()
		}
	}()
}

// makeSpare starts a spare and puts it in a new memory cgroup with the
// command's limit.
func (r *Runner) makeSpare() (*spare, error) {
	return spares.Make(r.netinit, r.memory, r.limits.Total, sealFDs, start)
}
