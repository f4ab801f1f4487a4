package seccomp

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused with EPERM (doc.go says why, with the
// rest of what the filter refuses).
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
// S_ISGID. The rest of the list is per architecture (seccomp_linux_*.go).
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

// Filter returns the filter for this machine's architecture, in the byte
// form bwrap reads (bwrap --seccomp), or nil where Corral has no filter
// for it.
func Filter() []byte {
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
