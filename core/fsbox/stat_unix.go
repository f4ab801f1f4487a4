//go:build unix

package fsbox

import (
	"io/fs"
	"syscall"
)

// oDirectory makes an open fail on anything but a folder.
const oDirectory = syscall.O_DIRECTORY

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// idOf is fi's device and inode, when the system gives them.
func idOf(fi fs.FileInfo) (fileID, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}, true
	}
	return fileID{}, false
}

// owner is fi's uid and gid, when the system gives them.
func owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid), true
	}
	return 0, 0, false
}
