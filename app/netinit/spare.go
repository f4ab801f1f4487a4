package main

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// The spare mode is a sandbox's first process made ahead of time, so that
// what costs the most in starting one — putting a process in a cgroup,
// which waits for an RCU grace period (several milliseconds, more on a
// loaded machine) — is paid between commands, not by one:
//
//	corral-netinit spare SOCKFD
//
// Corral starts it and puts it in the command's cgroups; it waits on SOCKFD for one message
// carrying descriptors: the first is a pipe that holds PROGRAM and its
// ARGS, each ending in a NUL byte; the others become its descriptors 0,
// 1, 2, 3 … in order. It then enters a new mount namespace (copied from
// the host's as it is then) and becomes PROGRAM with an empty environment:
// the same process, in the same cgroups and process group. PROGRAM is
// corral-netinit asroot …, which it runs itself, without starting again. A socket closed without a message
// (Corral no longer needs the spare) ends it quietly.
//
// Only raw system calls run between receiving the descriptors and exec:
// nothing of Go's own (its poller) may sit on a number they take.
func spare(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: corral-netinit spare SOCKFD")
	}
	sock, err := strconv.Atoi(args[0])
	if err != nil || sock < 3 {
		return fmt.Errorf("bad descriptor %q", args[0])
	}
	// The mount namespace is made when the command comes, not when the
	// spare was: a spare's copy of the host's mounts would miss what was
	// mounted since (a root's disk plugged in), where "/" propagates
	// nothing. unshare makes it for this thread only, so the rest — asroot
	// and the processes it starts — runs on this thread.
	runtime.LockOSThread()
	const maxFDs = 32
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*maxFDs))
	n, oobn, _, _, err := unix.Recvmsg(sock, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("wait for the command: %w", err)
	}
	if n == 0 && oobn == 0 {
		unix.Exit(0) // discarded
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("bad control message (%d, %v)", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) < 4 {
		return fmt.Errorf("bad descriptors (%d, %v)", len(fds), err)
	}
	unix.Close(sock)
	var argvBuf bytes.Buffer
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fds[0], buf)
		if n > 0 {
			argvBuf.Write(buf[:n])
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read the command: %w", err)
		}
		if n == 0 {
			break
		}
		if argvBuf.Len() > 8<<20 {
			return fmt.Errorf("the command is too long")
		}
	}
	unix.Close(fds[0])
	argv := splitNUL(argvBuf.Bytes())
	if len(argv) == 0 {
		return fmt.Errorf("no program")
	}
	// Out of the way of the numbers they take, then onto them (dup3
	// leaves close-on-exec off; everything else has it on).
	targets := fds[1:]
	high := make([]int, len(targets))
	for i, fd := range targets {
		if high[i], err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3+len(targets)+maxFDs); err != nil {
			return fmt.Errorf("move descriptor: %w", err)
		}
		unix.Close(fd)
	}
	for i, fd := range high {
		if err := unix.Dup3(fd, i, 0); err != nil {
			return fmt.Errorf("place descriptor %d: %w", i, err)
		}
		unix.Close(fd)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %w", err)
	}
	if len(argv) > 1 && argv[1] == "asroot" {
		// This very program: run it here rather than start it again (its
		// start-up is a millisecond or more of every command).
		return asroot(argv[2:])
	}
	return fmt.Errorf("start %s: %w", argv[0], unix.Exec(argv[0], argv, []string{}))
}

func splitNUL(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out
}
