package connect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// systemPrograms are the folders an installed corral runs from (the
// Debian package puts it in /usr/bin).
var systemPrograms = []string{"/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/usr/local/sbin"}

// LinkPath is the link `make run` makes to the corral it built, under
// the owner's home: the stable name apps start when corral is not
// installed.
func LinkPath(home string) string { return filepath.Join(home, ".local", "bin", "corral") }

// Program returns the path an app's config should name to start corral,
// given exe, the program running now, and the owner's home: exe when it
// is installed (in a system folder of programs), else ~/.local/bin/corral
// (LinkPath), never a build folder that `make clean` empties or that a
// package install leaves behind. link is set when that link is missing
// or leads nowhere (a build folder since cleaned): whoever writes the
// config makes it, to exe (MakeLink). A file there, or a link to another
// corral, is left alone and exe is returned.
func Program(exe, home string) (path string, link bool) {
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	for _, dir := range systemPrograms {
		if filepath.Dir(exe) == dir || filepath.Dir(real) == dir {
			return exe, false
		}
	}
	if home == "" {
		return exe, false
	}
	l := LinkPath(home)
	if to, err := filepath.EvalSymlinks(l); err == nil {
		if to == real {
			return l, false
		}
		return exe, false
	}
	fi, err := os.Lstat(l)
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return l, true // missing, or a link that leads nowhere
	}
	return exe, false
}

// MakeLink makes LinkPath(home) a symbolic link to exe, with its folder,
// replacing only a link that leads nowhere.
func MakeLink(exe, home string) error {
	l := LinkPath(home)
	if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(l); err == nil {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return &fs.PathError{Op: "link", Path: l, Err: fs.ErrExist}
		}
		if _, err := os.Stat(l); err == nil {
			return &fs.PathError{Op: "link", Path: l, Err: fs.ErrExist} // leads somewhere: not ours to change
		}
		if err := os.Remove(l); err != nil {
			return err
		}
	}
	return os.Symlink(exe, l)
}
