//go:build !linux

package execbox

// On a system other than Linux, commands cannot run: the sandbox is
// bubblewrap, with seccomp, cgroups, user namespaces and overlayfs, all
// Linux's. NewRunner then returns a Runner whose Available says so in a
// sentence and whose Run and RunHelper answer errs.Unavailable with it.
// What follows are the Linux files' names (run_linux.go,
// overlay_linux.go, helper_linux.go, spare_linux.go), each refusing or
// empty, so that the rest of the package (Spec, plans, argv) builds and
// is vetted everywhere; the subpackages (limits, overlay, seccomp,
// userns) have stubs of their own.

import (
	"context"
	"errors"

	"corral/core/errs"
)

const needsLinux = "Commands need Linux: Corral runs them under bubblewrap, which this system does not have."

func platformWhy() string { return needsLinux }

func (r *Runner) helperRlimits(l HelperLimits) []rlimit { return nil }

func (r *Runner) exec(ctx context.Context, p *plan) (Result, error) {
	return Result{}, errs.New(errs.Unavailable, "", "%s", needsLinux)
}

// Overlay reports false: there are no overlays without Linux.
func (r *Runner) Overlay() (bool, string) { return false, needsLinux }

// RetryOverlay reports false: there are no overlays without Linux.
func (r *Runner) RetryOverlay(ctx context.Context, dir string) bool { return false }

func (r *Runner) setOverlayWhy(why string) {}

// ProbeOverlay refuses: there are no overlays without Linux.
func (r *Runner) ProbeOverlay(ctx context.Context, dir string) error { return errors.New(needsLinux) }

func (p *plan) layer(dir string) ([]Layer, error) { return nil, errors.New(needsLinux) }

func (p *plan) unlayer() {}

// spare_linux.go: no spare is ever made.
type spare struct{}
