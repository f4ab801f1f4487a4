// Package seccomp builds the seccomp filter every command of execbox runs
// under (bwrap --seccomp), as classic BPF. The filter refuses, with EPERM, system calls no ordinary program needs and that
// widen what a sandboxed process can reach in the kernel:
//
//   - new namespaces: unshare, setns, and clone with CLONE_NEWUSER (clone3
//     answers ENOSYS, so C libraries fall back to clone, whose flags the
//     filter can read)
//   - io_uring (io_uring_setup, _enter, _register): a large kernel surface
//     that also bypasses seccomp for the operations it queues
//   - tracing and reading other processes: ptrace, process_vm_readv,
//     process_vm_writev (so debuggers such as gdb and strace do not work
//     inside the sandbox)
//   - kernel keyrings: keyctl, add_key, request_key
//   - perf_event_open, bpf, userfaultfd
//   - loading kernels and modules, mounting, swapping, rebooting, accounting
//   - setuid and setgid files: chmod, fchmod, fchmodat and fchmodat2 with
//     S_ISUID or S_ISGID in the mode, and open, openat, creat, mknod and
//     mknodat creating a file with either bit, are refused with EPERM
//     (openat2, whose mode the filter cannot read, answers ENOSYS, and C
//     libraries fall back to openat). Folders may still be made setgid
//     with mkdir. What a command leaves in the owner's folders is checked
//     again where its changes are applied (core/commands).
//   - socket families other than those programs need to talk over the
//     network: socket() is allowed for AF_INET, AF_INET6 and AF_NETLINK
//     (NETLINK_ROUTE and NETLINK_SOCK_DIAG only: addresses, routes and
//     ss), refused with EPERM for AF_UNIX and with EAFNOSUPPORT for every
//     other family (AF_VSOCK, which on a virtual machine reaches the host
//     without the network namespace, AF_PACKET, AF_BLUETOOTH, AF_ALG …);
//     other netlink protocols answer EPROTONOSUPPORT. Unix sockets are
//     refused because a read-only bind mount does not stop connect()
//     reaching a socket file, so a socket in a [[sandbox.roots]] folder (an
//     ssh-agent, tmux or docker socket under /tmp) would otherwise be a
//     door to a program on the host. Pairs of connected sockets
//     (socketpair), which programs use among their own processes, still
//     work; a program that listens on a named Unix socket inside the
//     sandbox (Python's multiprocessing.Manager, gpg-agent) does not.
//   - system calls of another ABI (32-bit int 0x80 and x32 on amd64), which
//     would otherwise get around the list.
//
// Everything else is allowed: the filter is a deny list meant to close
// kernel attack surface, not to describe what programs may do (bubblewrap,
// the namespaces and the limits do that).
//
// # What it guarantees, and what not
//
// Filter returns the same program for the same architecture every time;
// it is built from the lists in seccomp_linux*.go when called and panics
// only if those lists are wrong (a jump out of range, a filter too long),
// which the tests of execbox would show at once. It covers amd64 and
// arm64: elsewhere, and on systems other than Linux, Filter returns nil
// and execbox logs that commands run without a filter. The filter is
// only as good as its list: a system call added to the kernel after it
// was written is allowed. Whether the filter holds inside a sandbox is
// tested end to end in execbox (TestSeccomp), not here.
package seccomp
