//go:build !linux

package limits

import (
	"errors"
	"log/slog"
)

const needsLinux = "Commands need Linux: Corral runs them under bubblewrap, which this system does not have."

// Cgroup is empty: there are no cgroups without Linux.
type Cgroup struct{}

// FindProc finds nothing to count processes with.
func FindProc(uid int, log *slog.Logger) Proc { return Proc{Root: uid == 0} }

// Describe says there is no limit.
func (p Proc) Describe(n int) string { return "none (" + needsLinux + ")" }

// FindCgroup refuses: there are no cgroups without Linux.
func FindCgroup(controller string) (*Cgroup, error) { return nil, errors.New(needsLinux) }
