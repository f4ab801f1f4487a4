package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// accessW is nil when Corral may write name (access(2) with W_OK).
func accessW(name string) error { return unix.Access(name, unix.W_OK) }

// fallocate gives f size bytes of disk, written or not.
func fallocate(f *os.File, size int64) error { return unix.Fallocate(int(f.Fd()), 0, 0, size) }

// freeSpace is the room, in bytes, that an unprivileged writer has on the
// file system holding dir.
func freeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}
