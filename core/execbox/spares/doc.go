// Package spares makes and hands over execbox's spare processes: as
// root, a sandbox's first process (corral-netinit's "spare" mode) is
// started ahead of time, already in a memory cgroup of its own with the
// command's limit, so that a run does not wait for the kernel's RCU grace
// period that moving a process into a cgroup costs. When a command comes,
// Launch sends the spare its argv, its standard input and its descriptors
// over a Unix socket, and the spare becomes the asroot helper by exec.
//
// # What it guarantees, and what not
//
// Make either returns a spare that was started and, when a memory cgroup
// was asked for, moved into it, or removes what it made and returns the
// error. Launch hands over the command once: the socket is closed after,
// whatever happened. Discard closes the socket, waits up to 5 seconds for
// the spare to exit, then kills it, and removes its cgroup. Alive reports
// whether the process has not exited yet, not that it will take a command.
// When spares are used, how many and for how long is execbox's to decide
// (Runner.takeSpare, spareIdle). Built on Linux only, where commands run.
package spares
