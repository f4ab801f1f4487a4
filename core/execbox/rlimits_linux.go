package execbox

import (
	"golang.org/x/sys/unix"

	"corral/core/execbox/limits"
)

// rlimits returns the limits to set on the sandbox's init.
func (r *Runner) rlimits() []rlimit {
	l := r.limits
	out := []rlimit{{Resource: unix.RLIMIT_CORE, Value: 0}}
	if l.Procs > 0 {
		n := uint64(l.Procs)
		if !r.procs.Root && !r.procs.PerNS {
			n += uint64(limits.CountTasks(r.uid))
		}
		out = append(out, rlimit{Resource: unix.RLIMIT_NPROC, Value: n})
	}
	if l.FileSize > 0 {
		out = append(out, rlimit{Resource: unix.RLIMIT_FSIZE, Value: uint64(l.FileSize)})
	}
	if l.Memory > 0 {
		out = append(out, rlimit{Resource: unix.RLIMIT_DATA, Value: uint64(l.Memory)})
	}
	if l.AddressSpace > 0 {
		out = append(out, rlimit{Resource: unix.RLIMIT_AS, Value: uint64(l.AddressSpace)})
	}
	if l.OpenFiles > 0 {
		out = append(out, rlimit{Resource: unix.RLIMIT_NOFILE, Value: uint64(l.OpenFiles)})
	}
	return out
}
