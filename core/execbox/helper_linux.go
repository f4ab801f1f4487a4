package execbox

import (
	"math"

	"golang.org/x/sys/unix"
)

// helperRlimits are the rlimits of l (with its defaults).
func (r *Runner) helperRlimits(l HelperLimits) []rlimit {
	procs := uint64(l.Procs)
	if !r.procs.root && !r.procs.perNS {
		procs += uint64(countTasks(r.uid))
	}
	cpu := uint64(math.Ceil(l.CPUTime.Seconds()))
	return []rlimit{
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_NPROC, procs},
		{unix.RLIMIT_FSIZE, 1 << 20}, // bwrap writes /etc/passwd before the folders turn read-only
		{unix.RLIMIT_DATA, uint64(l.Memory)},
		{unix.RLIMIT_AS, uint64(l.AddressSpace)},
		{unix.RLIMIT_NOFILE, uint64(l.OpenFiles)},
		{unix.RLIMIT_CPU, cpu},
	}
}
