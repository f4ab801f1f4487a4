package versions

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// writable is nil when the folder d can be written and searched by
// Corral (access(2) with W_OK|X_OK).
func writable(d string) error { return unix.Access(d, unix.W_OK|unix.X_OK) }

// freeBytes is what the file system holding dir has free for Corral, and
// whether it could be told.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
