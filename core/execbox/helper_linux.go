package execbox

import (
	"math"

	"golang.org/x/sys/unix"

	"corral/core/execbox/limits"
)

// helperRlimits are the rlimits of l (with its defaults).
func (r *Runner) helperRlimits(l HelperLimits) []rlimit {
	procs := uint64(l.Procs)
	if !r.procs.Root && !r.procs.PerNS {
		procs += uint64(limits.CountTasks(r.uid))
	}
	cpu := uint64(math.Ceil(l.CPUTime.Seconds()))
	return []rlimit{
		{Resource: unix.RLIMIT_CORE, Value: 0},
		{Resource: unix.RLIMIT_NPROC, Value: procs},
		{Resource: unix.RLIMIT_FSIZE, Value: 1 << 20}, // bwrap writes /etc/passwd before the folders turn read-only
		{Resource: unix.RLIMIT_DATA, Value: uint64(l.Memory)},
		{Resource: unix.RLIMIT_AS, Value: uint64(l.AddressSpace)},
		{Resource: unix.RLIMIT_NOFILE, Value: uint64(l.OpenFiles)},
		{Resource: unix.RLIMIT_CPU, Value: cpu},
	}
}
