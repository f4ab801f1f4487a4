package fsbox

import (
	"io/fs"
	"os"
)

// specialBits are the mode bits no file Corral puts in place keeps.
const specialBits = fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// ClearSpecial removes the setuid, setgid and sticky bits of the regular
// file rel of root, and the setuid and setgid bits of a folder (a folder's
// sticky bit is left: it only limits who may delete). A symbolic link or
// anything else is left alone. A rename keeps an inode's mode, so every
// path that renames a file into an agent-writable folder calls it (Move;
// core/commands when it applies a command's changes).
func ClearSpecial(root *os.Root, rel string) error {
	fi, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	clear := specialBits
	switch {
	case fi.Mode().IsRegular():
	case fi.IsDir():
		clear = fs.ModeSetuid | fs.ModeSetgid
	default:
		return nil
	}
	if fi.Mode()&clear == 0 {
		return nil
	}
	// Root.Chmod follows a link that replaced rel since, but only inside
	// the root; what it lands on gets only fewer bits.
	return root.Chmod(rel, fi.Mode()&^clear&(fs.ModePerm|specialBits))
}

// Settle makes rel, just renamed into place inside root from a command's
// upper layer, one of Corral's own files: owned by Corral's uid and gid
// (a command may have made it as another, unprivileged user; see
// core/execbox), and without the bits ClearSpecial removes.
func Settle(root *os.Root, rel string) error {
	fi, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	if uid, gid, ok := owner(fi); ok && (uid != os.Getuid() || gid != os.Getgid()) {
		// chown also drops setuid and setgid from a file; ClearSpecial
		// below makes sure of it.
		if err := root.Lchown(rel, os.Getuid(), os.Getgid()); err != nil {
			return err
		}
	}
	return ClearSpecial(root, rel)
}
