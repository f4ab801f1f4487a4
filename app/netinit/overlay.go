package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The overlay mode lets Corral keep versions of what a command changes:
//
//	corral-netinit overlay SPECFD STATUSFD -- PROGRAM ARGS...
//
// Corral starts it in a new user and mount namespace of its own (mapped
// to the owner's own uid and gid) with CAP_SYS_ADMIN as an ambient
// capability. It reads from SPECFD groups of four NUL-terminated paths —
// lower, upper, work, merged — and mounts an overlay (userxattr) on each
// merged folder: the real folder as the lower layer, the upper and work
// folders in Corral's data folder. Everything the command writes lands in
// the upper folder; Corral applies it to the real folder after the command
// has ended. It limits its namespace to a sixteenth of the owner's
// inotify and fanotify pools (limitShares). Then it drops every capability, writes one byte to STATUSFD
// (the mounts are in place), closes both and becomes PROGRAM (bubblewrap,
// with Corral's unchanged options). The mounts live in this process's
// mount namespace only and vanish with the sandbox.
//
// A failure prints one line and exits 125 before PROGRAM runs, without
// writing to STATUSFD, so Corral knows the command did not start.

func init() {
	// Capabilities are per thread: the thread that drops them must be the
	// one that execs.
	runtime.LockOSThread()
}

const maxSpec = 1 << 20

func overlay(args []string) error {
	if len(args) < 4 || args[2] != "--" {
		return fmt.Errorf("usage: corral-netinit overlay SPECFD STATUSFD -- PROGRAM ARGS")
	}
	var fds [2]int
	for i := range fds {
		fd, err := strconv.Atoi(args[i])
		if err != nil || fd < 3 {
			return fmt.Errorf("bad descriptor %q", args[i])
		}
		fds[i] = fd
	}
	spec := os.NewFile(uintptr(fds[0]), "spec")
	b, err := io.ReadAll(io.LimitReader(spec, maxSpec))
	spec.Close()
	if err != nil {
		return fmt.Errorf("read the overlay spec: %w", err)
	}
	fields := strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
	if len(b) == 0 || len(fields)%4 != 0 {
		return fmt.Errorf("bad overlay spec (%d fields)", len(fields))
	}
	// Nothing mounted here reaches the namespace Corral runs in: a mount
	// namespace made in a new user namespace receives its parent's mount
	// events but never sends any (its shared mounts become slaves).
	for i := 0; i < len(fields); i += 4 {
		lower, upper, work, merged := fields[i], fields[i+1], fields[i+2], fields[i+3]
		for _, p := range fields[i : i+4] {
			if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, ",:\\\n") {
				return fmt.Errorf("path %q cannot be given to overlayfs", p)
			}
		}
		// volatile: the layers are applied by Corral and thrown away, so
		// the overlay need not sync the upper file system (the whole
		// disk) when it goes away.
		opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + ",userxattr,volatile"
		if err := unix.Mount("overlay", merged, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount an overlay on %s: %w", lower, err)
		}
	}
	// The command runs as the owner's uid, whose inotify and fanotify
	// pools the owner's own programs use too: it gets a share of them.
	if err := limitShares(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if _, err := unix.Write(fds[1], []byte{1}); err != nil {
		return fmt.Errorf("report the mounts: %w", err)
	}
	unix.Close(fds[1])
	prog := args[3]
	return fmt.Errorf("start %s: %w", prog, unix.Exec(prog, args[3:], os.Environ()))
}
