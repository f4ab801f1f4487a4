//go:build !linux

package commands

import "errors"

// Commands, and so their overlay layers, need Linux (core/execbox); these
// stand in for the system calls that apply the layers.

const (
	oNoFollow       = 0
	renameNoReplace = 1
	renameExchange  = 2
)

var errNeedsLinux = errors.New("Command versions need Linux.")

func fgetxattr(fd int, attr string, dest []byte) (int, error) { return 0, errNeedsLinux }

func renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	return errNeedsLinux
}
