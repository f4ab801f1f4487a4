package execbox

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// The seccomp filter every command runs under (bwrap --seccomp). It
// refuses, with EPERM, system calls no ordinary program needs and that
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
//     again where its changes are applied (core/sandbox).
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
var deniedSyscalls = []uintptr{
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF, unix.SYS_USERFAULTFD,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSMOUNT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT, unix.SYS_OPEN_BY_HANDLE_AT,
}

// sysFchmodat2 is fchmodat2 (Linux 6.6), the same number on every
// architecture; x/sys may not name it yet.
const sysFchmodat2 = 452

// modeArgs are the system calls that take a file mode, with the index of
// that argument: the filter refuses them when the mode holds S_ISUID or
// S_ISGID. The rest of the list is per architecture (seccomp_*.go).
var modeArgs = append([]modeArg{
	{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {sysFchmodat2, 2},
	{unix.SYS_OPENAT, 3}, {unix.SYS_MKNODAT, 2},
}, archModeArgs...)

type modeArg struct {
	nr  uintptr
	arg int
}

// allowedNetlink are the netlink protocols a command may open.
var allowedNetlink = []uint32{unix.NETLINK_ROUTE, unix.NETLINK_SOCK_DIAG}

// Classic BPF as seccomp reads it.
const (
	bpfLdAbs     = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq       = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge       = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset      = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet       = unix.BPF_RET | unix.BPF_K
	offNr        = 0  // seccomp_data.nr
	offArch      = 4  // seccomp_data.arch
	offArg0      = 16 // seccomp_data.args[0], its low 32 bits (little-endian)
	retAllow     = unix.SECCOMP_RET_ALLOW
	retErrno     = unix.SECCOMP_RET_ERRNO
	x32Bit       = 0x40000000
	specialBits  = unix.S_ISUID | unix.S_ISGID
	lAllow       = "allow"
	lEPERM       = "eperm"
	lENOSYS      = "enosys"
	lNoFamily    = "eafnosupport"
	lNoProtocol  = "eprotonosupport"
	lClone       = "clone"
	lSocket      = "socket"
	lNetlink     = "netlink"
	lModePrefix  = "mode"
	maxSeccompOp = 4096
)

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// asm assembles a filter whose jumps name labels; "" is the next
// instruction.
type asm struct {
	prog   []insn
	jumps  [][2]string // per instruction: true and false targets
	labels map[string]int
}

func (a *asm) label(name string) {
	if _, dup := a.labels[name]; dup {
		panic("seccomp: label " + name + " twice")
	}
	a.labels[name] = len(a.prog)
}

func (a *asm) op(code uint16, k uint32) { a.jmp(code, k, "", "") }

func (a *asm) jmp(code uint16, k uint32, jt, jf string) {
	a.prog = append(a.prog, insn{code: code, k: k})
	a.jumps = append(a.jumps, [2]string{jt, jf})
}

func (a *asm) resolve() []insn {
	for i := range a.prog {
		for j, l := range a.jumps[i] {
			if l == "" {
				continue
			}
			to, ok := a.labels[l]
			d := to - i - 1
			if !ok || d < 0 || d > 255 {
				panic(fmt.Sprintf("seccomp: jump to %q (%d) out of range", l, d))
			}
			if j == 0 {
				a.prog[i].jt = uint8(d)
			} else {
				a.prog[i].jf = uint8(d)
			}
		}
	}
	return a.prog
}

// seccompFilter returns the filter for this machine's architecture, in
// the byte form bwrap reads, or nil where Corral has no filter for it.
func seccompFilter() []byte {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	a := &asm{labels: map[string]int{}}
	a.op(bpfLdAbs, offArch)
	a.jmp(bpfJeq, arch, "", lEPERM)
	a.op(bpfLdAbs, offNr)
	if runtime.GOARCH == "amd64" {
		a.jmp(bpfJge, x32Bit, lEPERM, "")
	}
	for _, nr := range deniedSyscalls {
		a.jmp(bpfJeq, uint32(nr), lEPERM, "")
	}
	a.jmp(bpfJeq, unix.SYS_CLONE, lClone, "")
	a.jmp(bpfJeq, unix.SYS_CLONE3, lENOSYS, "")
	a.jmp(bpfJeq, unix.SYS_OPENAT2, lENOSYS, "")
	a.jmp(bpfJeq, unix.SYS_SOCKET, lSocket, "")
	for _, m := range modeArgs {
		a.jmp(bpfJeq, uint32(m.nr), lModePrefix+fmt.Sprint(m.arg), "")
	}
	a.jmp(bpfRet, retAllow, "", "")

	// clone: refuse a new user namespace (its flags are the first argument).
	a.label(lClone)
	a.op(bpfLdAbs, offArg0)
	a.jmp(bpfJset, unix.CLONE_NEWUSER, lEPERM, lAllow)

	// socket(family, type, protocol): an allowlist of families.
	a.label(lSocket)
	a.op(bpfLdAbs, offArg0)
	a.jmp(bpfJeq, unix.AF_INET, lAllow, "")
	a.jmp(bpfJeq, unix.AF_INET6, lAllow, "")
	a.jmp(bpfJeq, unix.AF_UNIX, lEPERM, "")
	a.jmp(bpfJeq, unix.AF_NETLINK, lNetlink, lNoFamily)
	a.label(lNetlink)
	a.op(bpfLdAbs, offArg0+2*8)
	for i, p := range allowedNetlink {
		next := ""
		if i == len(allowedNetlink)-1 {
			next = lNoProtocol
		}
		a.jmp(bpfJeq, p, lAllow, next)
	}

	// A mode argument with the setuid or setgid bit.
	for _, n := range []int{1, 2, 3} {
		a.label(lModePrefix + fmt.Sprint(n))
		a.op(bpfLdAbs, uint32(offArg0+8*n))
		a.jmp(bpfJset, specialBits, lEPERM, lAllow)
	}

	a.label(lAllow)
	a.op(bpfRet, retAllow)
	a.label(lEPERM)
	a.op(bpfRet, retErrno|uint32(unix.EPERM))
	a.label(lENOSYS)
	a.op(bpfRet, retErrno|uint32(unix.ENOSYS))
	a.label(lNoFamily)
	a.op(bpfRet, retErrno|uint32(unix.EAFNOSUPPORT))
	a.label(lNoProtocol)
	a.op(bpfRet, retErrno|uint32(unix.EPROTONOSUPPORT))

	prog := a.resolve()
	if len(prog) > maxSeccompOp {
		panic("seccomp: filter too long")
	}
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
