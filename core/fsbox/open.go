package fsbox

import (
	"io/fs"
	"os"
	"strings"

	"corral/core/errs"
)

// Opened is what OpenNoFollow opened: a regular file, or a folder as a
// Dir of its own (Prefix its agent-visible path), never both.
type Opened struct {
	File *os.File
	Dir  *Dir
	Info Info
}

// Close closes the file or the folder.
func (o Opened) Close() error {
	if o.File != nil {
		return o.File.Close()
	}
	if o.Dir != nil {
		return o.Dir.Root.Close()
	}
	return nil
}

// OpenNoFollow opens rel for a shared link: a regular file (with the
// checks of Read), or a folder to list. No component may be a symbolic
// link, even one that stays inside the root: that answers denied.
//
// The walk holds on to what it checked: each folder on the way is
// lstat'ed in the folder above it, opened from there, and must be that
// very folder (same device and inode), so a symlink swapped in at any
// moment is refused, never followed, and the result is the file or folder
// the path names.
func (d Dir) OpenNoFollow(rel string) (Opened, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return Opened{}, err
	}
	// cur is the folder reached so far; it is this call's to close unless
	// it is still d.Root.
	cur := d.Root
	release := func() {
		if cur != d.Root {
			cur.Close()
		}
	}
	// For "." the one part is the root itself, opened again like any
	// folder: the caller always gets a handle of its own to close.
	parts := strings.Split(name, "/")
	for _, part := range parts[:len(parts)-1] {
		fi, err := cur.Lstat(part)
		if err == nil && !fi.IsDir() {
			err = d.notDir(name)
			if fi.Mode()&fs.ModeSymlink != 0 {
				err = d.symlinked(name)
			}
		}
		var next *os.Root
		if err == nil {
			next, err = d.openSame(cur, part, fi, name)
		}
		release()
		if err != nil {
			return Opened{}, d.fail(err, name)
		}
		cur = next
	}
	last := parts[len(parts)-1]
	fi, err := cur.Lstat(last)
	switch {
	case err != nil:
	case fi.Mode()&fs.ModeSymlink != 0:
		err = d.symlinked(name)
	case fi.IsDir():
		var sub *os.Root
		if sub, err = d.openSame(cur, last, fi, name); err == nil {
			release()
			info, _ := d.info(name, fi)
			return Opened{Dir: &Dir{Root: sub, Prefix: d.Visible(name)}, Info: info}, nil
		}
	case slash:
		err = d.notDir(name)
	default:
		err = d.checkRegular(name, fi)
	}
	if err != nil {
		release()
		return Opened{}, d.fail(err, name)
	}
	f, ofi, err := d.openChecked(cur, last, name, fi)
	release() // an open file does not need its folder's handle
	if err != nil {
		return Opened{}, err
	}
	info, _ := d.info(name, ofi)
	return Opened{File: f, Info: info}, nil
}

// openSame opens the folder part of parent, which an lstat described as
// fi, and makes sure it opened that folder and not a symlink swapped in
// since.
func (d Dir) openSame(parent *os.Root, part string, fi fs.FileInfo, name string) (*os.Root, error) {
	sub, err := parent.OpenRoot(part)
	if err != nil {
		return nil, err
	}
	sfi, err := sub.Stat(".")
	if err == nil && !os.SameFile(fi, sfi) {
		err = d.symlinked(name)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

func (d Dir) symlinked(name string) error {
	v := d.Visible(name)
	return errs.New(errs.Denied, v, "%s is or goes through a symbolic link, and shared links do not follow symbolic links.", v)
}
