package execbox

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// No sandbox process may outlive Corral. bubblewrap's --die-with-parent
// binds it to Corral only once bubblewrap has set itself up; a Corral
// killed before that (while the overlay helper mounts, or bubblewrap
// parses its options) left a command running, unlimited and unrecorded.
// So every sandbox process is started with PR_SET_PDEATHSIG(SIGKILL) set
// between fork and exec (os/exec kills the child at once if Corral is
// already gone); it is kept across the helper's exec of bubblewrap,
// whose credentials only shrink.
//
// The kernel sends that signal when the thread that forked exits, not the
// process: a Go thread exits when a goroutine locked to it returns. So
// every start happens on one thread that never exits while Corral runs.
// As root, the per-run cgroups of a Corral that died are emptied at the
// next start (core/execbox/limits, sweep), for whatever got past both.

// spawns carries starts to the spawner goroutine, started by the first.
var (
	spawns     = make(chan func())
	spawnerRun sync.Once
)

func spawner() {
	runtime.LockOSThread() // never unlocked: this thread is every child's parent
	for f := range spawns {
		f()
	}
}

// start starts cmd from the spawner thread, with the parent-death signal.
func start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnerRun.Do(func() { go spawner() })
	done := make(chan error, 1)
	spawns <- func() { done <- cmd.Start() }
	return <-done
}
