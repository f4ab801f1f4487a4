// Command corral-netinit starts a sandboxed command's network. Corral runs
// it as the first program inside the command's sandbox, in the sandbox's
// own network namespace (whose only interface is its own loopback):
//
//	corral-netinit FD ADDR -- PROGRAM ARGS...
//
// It listens on ADDR (an IPv4 loopback address and port, such as
// 127.0.0.1:3128) inside that namespace, hands the listening socket to
// Corral over the Unix socket FD it inherited, closes both, and then
// becomes PROGRAM (execve), so nothing of it stays running. Corral accepts
// the command's connections on that socket from outside the sandbox and
// serves them with its egress proxy; the sandbox itself has no other way
// out.
//
// It is a separate, static program (built with CGO_ENABLED=0) so that
// starting it costs about a millisecond: besides golang.org/x/sys it
// imports only small standard packages (fmt, os, io, bytes, strings,
// strconv, net/netip; not net). Any failure prints one line and exits 125
// before PROGRAM runs.
//
// The same program has two more modes, which Corral runs outside the
// sandbox: "overlay" records what a command changes (overlay.go), and
// "asroot", when Corral runs as root, makes the command run as an
// unprivileged user and shows it the folders it may use (asroot.go).
//
// Guarantees: PROGRAM starts only after the listener was handed over
// (or, in overlay mode, the mounts are in place and every capability is
// dropped); the listening address is an IPv4 loopback one; the descriptors
// it was given and the listener are closed before PROGRAM runs.
//
// Not guaranteed: it decides nothing about the network. What the command
// may reach is decided outside the sandbox, by the proxy Corral serves on
// the socket handed over; a sandbox started without Corral's namespaces
// gets no fence from this program alone.
package main

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

const failed = 125

func main() {
	if len(os.Args) > 1 && os.Args[1] == "asroot" {
		if err := asroot(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "corral: the command's sandbox could not be set up: %v\n", err)
			os.Exit(failed)
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "stage2" {
		if err := stage2(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "corral: the command's sandbox could not be set up: %v\n", err)
			os.Exit(failed)
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "spare" {
		if err := spare(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "corral: the command's sandbox could not be set up: %v\n", err)
			os.Exit(failed)
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "overlay" {
		if err := overlay(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "corral: the command's overlay could not be set up: %v\n", err)
			os.Exit(failed)
		}
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "corral: the command's network could not be set up: %v\n", err)
		os.Exit(failed)
	}
}

func run(args []string) error {
	if len(args) < 4 || args[2] != "--" {
		return fmt.Errorf("usage: corral-netinit FD ADDR -- PROGRAM ARGS")
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		return fmt.Errorf("bad descriptor %q", args[0])
	}
	addr, err := netip.ParseAddrPort(args[1])
	if err != nil || !addr.Addr().Is4() || !addr.Addr().IsLoopback() {
		return fmt.Errorf("bad listen address %q", args[1])
	}
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	err = unix.Sendmsg(fd, []byte{1}, unix.UnixRights(ln), nil, 0)
	unix.Close(ln)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("hand over the listener: %w", err)
	}
	prog := args[3]
	return fmt.Errorf("start %s: %w", prog, unix.Exec(prog, args[3:], os.Environ()))
}

func listen(addr netip.AddrPort) (int, error) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(s)
		return -1, fmt.Errorf("setsockopt: %w", err)
	}
	if err := unix.Bind(s, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}); err != nil {
		unix.Close(s)
		return -1, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if err := unix.Listen(s, 128); err != nil {
		unix.Close(s)
		return -1, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s, nil
}
