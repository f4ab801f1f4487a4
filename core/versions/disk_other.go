//go:build !linux

package versions

import (
	"errors"
	"os"
)

// writable is nil when d is a folder. Without Linux's access(2) its
// permissions are not checked: a write into it fails later instead.
func writable(d string) error {
	fi, err := os.Stat(d)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a folder")
	}
	return err
}

// freeBytes cannot tell the free space here: the store keeps its default
// size (DefaultMaxBytes).
func freeBytes(dir string) (int64, bool) { return 0, false }
