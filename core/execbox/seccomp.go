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
//   - creating Unix-domain sockets (socket with AF_UNIX): a read-only bind
//     mount does not stop connect() reaching a socket file, so a socket in
//     a [[sandbox.roots]] folder (an ssh-agent, tmux or docker socket under
//     /tmp) would otherwise be a door to a program on the host. Pairs of
//     connected sockets (socketpair), which programs use among their own
//     processes, still work; a program that listens on a named Unix socket
//     inside the sandbox (Python's multiprocessing.Manager, gpg-agent) does
//     not.
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

// Classic BPF as seccomp reads it.
const (
	bpfLdAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K
	offNr     = 0  // seccomp_data.nr
	offArch   = 4  // seccomp_data.arch
	offArg0   = 16 // seccomp_data.args[0], its low 32 bits (little-endian)
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	x32Bit    = 0x40000000
)

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
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
	// Layout: checks, then three shared returns at the end: allow, EPERM,
	// ENOSYS. Jumps are counted from the next instruction.
	var p []insn
	n := len(deniedSyscalls)
	// total = 2 (arch) + 1 (ld nr) + x32 + n + 3 (clone, clone3, socket) + 1 (ret allow)
	// + 2 (clone flags) + 2 (socket family) + 3 returns
	x32 := 0
	if runtime.GOARCH == "amd64" {
		x32 = 1
	}
	body := 3 + x32 + n + 3 + 1 + 2 + 2
	allow, eperm, enosys := body, body+1, body+2
	jump := func(from, to int) uint8 {
		d := to - from - 1
		if d < 0 || d > 255 {
			panic(fmt.Sprintf("seccomp: jump %d out of range", d))
		}
		return uint8(d)
	}
	p = append(p, insn{bpfLdAbs, 0, 0, offArch})
	p = append(p, insn{bpfJeq, 0, jump(1, eperm), arch})
	p = append(p, insn{bpfLdAbs, 0, 0, offNr})
	if x32 == 1 {
		p = append(p, insn{bpfJge, jump(len(p), eperm), 0, x32Bit})
	}
	for _, nr := range deniedSyscalls {
		p = append(p, insn{bpfJeq, jump(len(p), eperm), 0, uint32(nr)})
	}
	checkClone, checkSocket := body-4, body-2
	p = append(p, insn{bpfJeq, jump(len(p), checkClone), 0, unix.SYS_CLONE})
	p = append(p, insn{bpfJeq, jump(len(p), enosys), 0, unix.SYS_CLONE3})
	p = append(p, insn{bpfJeq, jump(len(p), checkSocket), 0, unix.SYS_SOCKET})
	p = append(p, insn{bpfRet, 0, 0, retAllow})
	// clone: refuse a new user namespace (its flags are the first argument).
	p = append(p, insn{bpfLdAbs, 0, 0, offArg0})
	p = append(p, insn{bpfJset, jump(len(p), eperm), jump(len(p), allow), unix.CLONE_NEWUSER})
	// socket: refuse the Unix domain (its family is the first argument).
	p = append(p, insn{bpfLdAbs, 0, 0, offArg0})
	p = append(p, insn{bpfJeq, jump(len(p), eperm), jump(len(p), allow), unix.AF_UNIX})
	p = append(p, insn{bpfRet, 0, 0, retAllow}, insn{bpfRet, 0, 0, retEPERM}, insn{bpfRet, 0, 0, retENOSYS})
	if len(p) != body+3 {
		panic("seccomp: layout")
	}
	out := make([]byte, 0, 8*len(p))
	for _, in := range p {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
