package fsbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"corral/core/errs"
	"corral/core/killpoint"
	"corral/core/paths"
)

// Write writes data to the file rel of d, creating missing parent folders,
// and returns the number of bytes written. Without appendMode the file is
// replaced atomically (temp file and rename); with appendMode the existing
// regular file is opened with O_APPEND (and created if missing), and loses
// its setuid, setgid and sticky bits (as root the kernel keeps them). A path
// whose last component is a symlink inside the root writes to the link's
// target. Writing to a folder answers is_directory.
func (d Dir) Write(rel string, data []byte, appendMode bool) (int64, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return 0, err
	}
	if name == "." {
		return 0, d.isDir(name)
	}
	if err := d.refuseTempName(name); err != nil {
		return 0, err
	}
	if slash {
		fi, err := d.Root.Stat(name + "/")
		switch {
		case err == nil && fi.IsDir():
			return 0, d.isDir(name)
		case errors.Is(err, fs.ErrNotExist):
			v := d.Visible(name)
			return 0, errs.New(errs.InvalidPath, v, "%s/ ends with a slash, which names a folder; leave the slash out to write a file.", v)
		default:
			return 0, d.fail(err, name)
		}
	}
	target, err := d.resolveLinks(name)
	if err != nil {
		return 0, err
	}
	if err := d.mkdirParent(target, name); err != nil {
		return 0, err
	}
	if appendMode {
		return d.appendTo(target, name, data)
	}
	if err := d.replace(target, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// mkdirParent creates the parent folders of target. name is the path the
// agent asked for, used in errors.
func (d Dir) mkdirParent(target, name string) error {
	dir := path.Dir(target)
	if dir == "." {
		return nil
	}
	if err := d.Root.MkdirAll(dir, 0o755); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			v := d.Visible(name)
			return errs.Wrap(err, errs.NotDirectory, v, "A folder on the way to %s is a file.", v)
		}
		return d.fail(err, name)
	}
	return nil
}

// replace atomically replaces (or creates) the regular file target with
// what fill writes: a temp file in the same folder, synced, renamed into
// place, removed on failure. The old file's permission bits are kept.
func (d Dir) replace(target, name string, fill func(io.Writer) error) error {
	perm := fs.FileMode(0o644)
	fi, err := d.Root.Lstat(target)
	switch {
	case err == nil && fi.IsDir():
		return d.isDir(name)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// resolveLinks followed every link; one appeared since. Replacing
		// it would be safe (rename does not follow links) but surprising.
		return d.fail(syscall.ELOOP, name)
	case err == nil && !fi.Mode().IsRegular():
		return d.special(name)
	case err == nil:
		perm = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return d.fail(err, name)
	}
	f, tmp, err := d.createTemp(path.Dir(target))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close() // may already be closed; the error does not matter
			d.Root.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return d.fail(err, name)
	}
	if err := f.Chmod(perm); err != nil {
		return d.fail(err, name)
	}
	if err := f.Sync(); err != nil {
		return d.fail(err, name)
	}
	if err := f.Close(); err != nil {
		return d.fail(err, name)
	}
	if err := d.Root.Rename(tmp, target); err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.EISDIR) {
			return d.isDir(name)
		}
		return d.fail(err, name)
	}
	ok = true
	return nil
}

// appendTo appends data to the regular file target, creating it if
// missing. Like a write it replaces the file atomically: the old content
// and data go to a temporary file, which is renamed into place, so a
// crash leaves the old content or the whole new one, never a part. The
// cost is a copy of the file per append.
func (d Dir) appendTo(target, name string, data []byte) (int64, error) {
	fi, err := d.Root.Stat(target)
	exists := err == nil
	switch {
	case err == nil:
		if err := d.checkRegular(name, fi); err != nil {
			return 0, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return 0, d.fail(err, name)
	}
	err = d.replace(target, name, func(w io.Writer) error {
		if exists {
			f, _, err := d.openChecked(d.Root, target, name, nil)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		half := len(data) / 2
		if _, err := w.Write(data[:half]); err != nil {
			return err
		}
		killpoint.Here("write.partial")
		_, err := w.Write(data[half:])
		return err
	})
	if err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// Edit replaces oldText with newText in the text file rel of d and returns
// the number of replacements. Unless replaceAll, oldText must occur exactly
// once; zero or several occurrences answer conflict. An empty oldText
// answers invalid_params. The file is written back atomically. It is
// EditText with one edit.
func (d Dir) Edit(rel, oldText, newText string, replaceAll bool) (int, error) {
	_, _, counts, err := d.EditText(rel, []Replacement{{Old: oldText, New: newText, All: replaceAll}}, false)
	if err != nil {
		return 0, err
	}
	return counts[0], nil
}

// Delete removes the file, symlink or folder rel of d. A symlink is removed
// itself, never its target. A folder that is not empty needs recursive,
// else conflict; the root itself (".") answers denied.
func (d Dir) Delete(rel string, recursive bool) error {
	name, slash, err := d.name(rel)
	if err != nil {
		return err
	}
	if name == "." {
		v := d.Visible(name)
		return errs.New(errs.Denied, v, "%s is the top of its area; Corral will not delete it.", v)
	}
	fi, err := d.Root.Lstat(name)
	if err != nil {
		return d.fail(err, name)
	}
	if slash {
		if sfi, err := d.Root.Stat(name + "/"); err != nil {
			return d.fail(err, name)
		} else if !sfi.IsDir() {
			return d.notDir(name)
		}
	}
	if fi.IsDir() && recursive {
		err = d.Root.RemoveAll(name)
	} else {
		err = d.Root.Remove(name)
	}
	if err != nil {
		if fi.IsDir() && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist)) {
			v := d.Visible(name)
			return errs.Wrap(err, errs.Conflict, v, "%s is a folder that is not empty; ask for a recursive delete to remove it with everything in it.", v)
		}
		return d.fail(err, name)
	}
	return nil
}

// Move moves from in src to to in dst, creating dst's missing parent
// folders. Within one folder tree (the same *os.Root, or two roots opened at
// the same folder) it renames, which also moves folders and symlinks. Across
// trees a regular file is copied into dst (temp file and rename) and then
// removed from src; a folder or symlink answers conflict. An existing
// destination answers exists; moving a root answers denied.
func Move(src Dir, from string, dst Dir, to string) error {
	fname, fslash, err := src.name(from)
	if err != nil {
		return err
	}
	tname, tslash, err := dst.name(to)
	if err != nil {
		return err
	}
	if err := dst.refuseTempName(tname); err != nil {
		return err
	}
	if fname == "." {
		v := src.Visible(fname)
		return errs.New(errs.Denied, v, "%s is the top of its area; Corral will not move it.", v)
	}
	fi, err := src.Root.Lstat(fname)
	if err != nil {
		return src.fail(err, fname)
	}
	if fslash {
		if sfi, err := src.Root.Stat(fname + "/"); err != nil {
			return src.fail(err, fname)
		} else if !sfi.IsDir() {
			return src.notDir(fname)
		}
	}
	if tslash && !fi.IsDir() {
		v := dst.Visible(tname)
		return errs.New(errs.NotDirectory, v, "%s/ ends with a slash, which names a folder, but %s is not a folder.", v, src.Visible(fname))
	}
	if err := dst.mustNotExist(tname); err != nil {
		return err
	}

	if sameTree(src, dst) {
		if paths.Within(tname, fname) {
			v := src.Visible(fname)
			return errs.New(errs.Conflict, v, "%s can't be moved into itself.", v)
		}
		if err := dst.mkdirParent(tname, tname); err != nil {
			return err
		}
		if err := src.Root.Rename(fname, tname); err != nil {
			switch {
			case errors.Is(err, syscall.EINVAL):
				v := src.Visible(fname)
				return errs.Wrap(err, errs.Conflict, v, "%s can't be moved into itself.", v)
			case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
				v := dst.Visible(tname)
				return errs.Wrap(err, errs.Exists, v, "Something already exists at %s.", v)
			}
			return src.fail(err, fname)
		}
		if err := ClearSpecial(dst.Root, tname); err != nil {
			return dst.fail(err, tname)
		}
		return nil
	}

	switch {
	case fi.IsDir():
		v := src.Visible(fname)
		return errs.New(errs.Conflict, v, "%s is a folder; folders can only be moved within the same area. Move its files one by one.", v)
	case fi.Mode()&fs.ModeSymlink != 0:
		v := src.Visible(fname)
		return errs.New(errs.Conflict, v, "%s is a link; links can only be moved within the same area.", v)
	}
	f, sfi, err := src.openRegular(fname, false)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := dst.mkdirParent(tname, tname); err != nil {
		return err
	}
	if err := dst.replaceNew(tname, sfi.Mode().Perm(), f); err != nil {
		return err
	}
	f.Close()
	if err := src.Root.Remove(fname); err != nil {
		v := src.Visible(fname)
		return errs.Wrap(err, errs.IO, v, "%s was copied to %s, but the original could not be removed.", v, dst.Visible(tname))
	}
	return nil
}

// mustNotExist answers exists if anything (even a dangling symlink) is at
// name.
func (d Dir) mustNotExist(name string) error {
	if name == "." {
		v := d.Visible(name)
		return errs.New(errs.Exists, v, "%s already exists.", v)
	}
	_, err := d.Root.Lstat(name)
	switch {
	case err == nil:
		v := d.Visible(name)
		return errs.New(errs.Exists, v, "Something already exists at %s.", v)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return d.fail(err, name)
}

// replaceNew copies r into a new file name of d through a temp file; the
// rename happens only if name still does not exist.
func (d Dir) replaceNew(name string, perm fs.FileMode, r io.Reader) error {
	f, tmp, err := d.createTemp(path.Dir(name))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close() // may already be closed; the error does not matter
			d.Root.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return d.fail(err, name)
	}
	if err := f.Chmod(perm); err != nil {
		return d.fail(err, name)
	}
	if err := f.Sync(); err != nil {
		return d.fail(err, name)
	}
	if err := f.Close(); err != nil {
		return d.fail(err, name)
	}
	if err := d.mustNotExist(name); err != nil {
		return err
	}
	if err := d.Root.Rename(tmp, name); err != nil {
		return d.fail(err, name)
	}
	ok = true
	return nil
}

// sameTree reports whether a and b are the same folder, so that a rename
// can move between them.
func sameTree(a, b Dir) bool {
	if a.Root == b.Root {
		return true
	}
	ai, err := a.Root.Stat(".")
	if err != nil {
		return false
	}
	bi, err := b.Root.Stat(".")
	if err != nil {
		return false
	}
	return os.SameFile(ai, bi)
}

// CreateDir makes the folder rel of d and any folders above it that are
// missing, and returns the ones it made, from the top down (none when
// rel is a folder already). A file (or anything else that is not a
// folder) on the way answers not_directory; a symlink on the way is
// followed only as far as it stays inside d.
func (d Dir) CreateDir(rel string) ([]string, error) {
	name, _, err := d.name(rel)
	if err != nil {
		return nil, err
	}
	var made []string
	at := ""
	for part := range strings.SplitSeq(name, "/") {
		if part == "." {
			continue
		}
		at = path.Join(at, part)
		fi, err := d.Root.Stat(at)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			v := d.Visible(at)
			if at == name {
				return made, errs.New(errs.Exists, v, "%s exists and is a file, not a folder.", v)
			}
			return made, errs.New(errs.NotDirectory, v, "%s is a file, not a folder, so no folder can be made in it.", v)
		case !errors.Is(err, fs.ErrNotExist):
			return made, d.fail(err, at)
		}
		if err := d.Root.Mkdir(at, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, d.fail(err, at)
		} else if err == nil {
			made = append(made, at)
		}
	}
	return made, nil
}
