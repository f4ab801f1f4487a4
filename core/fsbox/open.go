package fsbox

import (
	"io/fs"
	"os"

	"corral/core/errs"
)

// Open opens a regular file of d for reading, with the same checks as
// Read (no special files, no hard links, symlinks only within the root).
// The caller closes the file. A folder answers is_directory.
func (d Dir) Open(rel string) (*os.File, Info, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, Info{}, err
	}
	f, fi, err := d.openRegular(name, slash)
	if err != nil {
		return nil, Info{}, err
	}
	info, _ := d.info(name, fi)
	return f, info, nil
}

// OpenNoFollow is Open for a path none of whose components may be a
// symbolic link: a symlink anywhere on the way answers denied, even one
// that stays inside the root. A folder answers is_directory once every
// component has been checked. The last component is checked with one
// lstat, and the opened handle must be that very file (same device and
// inode): a symlink swapped in after the check is refused, not followed.
// A folder on the way swapped for a symlink between its check and the
// open can still be followed inside the root, as the package comment says
// of every check-then-use.
func (d Dir) OpenNoFollow(rel string) (*os.File, Info, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, Info{}, err
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		fi, err := d.Root.Lstat(name[:i])
		switch {
		case err != nil:
			return nil, Info{}, d.fail(err, name)
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, Info{}, d.symlinked(name)
		case !fi.IsDir():
			return nil, Info{}, d.notDir(name)
		}
	}
	fi, err := d.Root.Lstat(name)
	if err != nil {
		return nil, Info{}, d.fail(err, name)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, Info{}, d.symlinked(name)
	}
	if err := d.checkRegular(name, fi); err != nil {
		return nil, Info{}, err
	}
	if slash {
		return nil, Info{}, d.notDir(name)
	}
	f, err := d.Root.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, Info{}, d.fail(err, name)
	}
	ofi, err := f.Stat()
	if err == nil && !os.SameFile(fi, ofi) {
		err = d.symlinked(name) // replaced between the lstat and the open
	}
	if err == nil {
		err = d.checkRegular(name, ofi)
	}
	if err != nil {
		f.Close()
		return nil, Info{}, d.fail(err, name)
	}
	info, _ := d.info(name, ofi)
	return f, info, nil
}

func (d Dir) symlinked(name string) error {
	v := d.Visible(name)
	return errs.New(errs.Denied, v, "%s is or goes through a symbolic link, and shared links do not follow symbolic links.", v)
}
