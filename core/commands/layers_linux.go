package commands

import "golang.org/x/sys/unix"

// The system calls that apply a command's overlay layers
// (apply.go); layers_other.go refuses them elsewhere.

const (
	oNoFollow       = unix.O_NOFOLLOW
	renameNoReplace = unix.RENAME_NOREPLACE
	renameExchange  = unix.RENAME_EXCHANGE
)

func fgetxattr(fd int, attr string, dest []byte) (int, error) {
	return unix.Fgetxattr(fd, attr, dest)
}

func renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, flags)
}
