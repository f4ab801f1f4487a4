package seccomp

import "golang.org/x/sys/unix"

// archModeArgs: the older calls amd64 still has (arm64 has only the *at forms).
var archModeArgs = []modeArg{
	{unix.SYS_CHMOD, 1}, {unix.SYS_OPEN, 2}, {unix.SYS_CREAT, 1}, {unix.SYS_MKNOD, 1},
}
