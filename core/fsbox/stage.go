package fsbox

import (
	"errors"
	"io/fs"
	"path"
	"syscall"

	"corral/core/errs"
)

// ReadFile returns the whole content and the permission bits of the
// regular file rel of d. A file over max bytes answers too_large; folders,
// special files and hard-linked files are refused as Read refuses them.
func (d Dir) ReadFile(rel string, max int64) ([]byte, fs.FileMode, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, 0, err
	}
	if name == "." {
		return nil, 0, d.isDir(name)
	}
	data, fi, err := d.readWhole(name, slash, max, func(size int64) error {
		v := d.Visible(name)
		if size < 0 {
			return errs.New(errs.TooLarge, v, "%s is larger than %d bytes; Corral patches files up to that size.", v, max)
		}
		return errs.New(errs.TooLarge, v, "%s is %d bytes; Corral patches files up to %d bytes.", v, size, max)
	})
	if err != nil {
		return nil, 0, err
	}
	return data, fi.Mode().Perm(), nil
}

// IsText reports whether data is text as Edit judges it: no image
// signature, and no NUL byte or invalid UTF-8 in its first 8 KiB.
func IsText(data []byte) bool {
	return sniffImage(data) == "" && !isBinary(data[:min(len(data), sniffLen)], len(data) <= sniffLen)
}

// Staged is new content for one file, written and synced under a
// temporary name in the file's folder but not yet in place. Staging every
// file of a change first and committing them after lets a caller make a
// multi-file change whose slow and failure-prone part (writing, syncing)
// happens before anything visible changes.
type Staged struct {
	d      Dir
	tmp    string   // the temporary file, "" once renamed or removed
	target string   // rel with its symlinks resolved
	name   string   // rel as asked, for errors
	create bool     // Commit must not replace anything
	made   []string // folders Stage created, deepest first
}

// Stage writes data to a temporary file in the folder of rel, creating
// missing parent folders, and syncs it. With create, rel must not exist
// (not even as a dangling link), now or at Commit, and the file gets perm
// (0 means 0644); without it, rel must be an existing regular file, whose
// permission bits the new content keeps. A symlink at rel is written
// through, as Write does.
func (d Dir) Stage(rel string, data []byte, perm fs.FileMode, create bool) (*Staged, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, err
	}
	if name == "." || slash {
		return nil, d.isDir(name)
	}
	if create {
		if err := d.mustNotExist(name); err != nil {
			return nil, err
		}
	}
	target, err := d.resolveLinks(name)
	if err != nil {
		return nil, err
	}
	if perm == 0 {
		perm = 0o644
	}
	fi, err := d.Root.Lstat(target)
	switch {
	case err == nil && fi.IsDir():
		return nil, d.isDir(name)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return nil, d.fail(syscall.ELOOP, name)
	case err == nil && !fi.Mode().IsRegular():
		return nil, d.special(name)
	case err == nil && create:
		v := d.Visible(name)
		return nil, errs.New(errs.Exists, v, "Something already exists at %s.", v)
	case err == nil:
		perm = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, d.fail(err, name)
	case !create:
		return nil, d.fail(err, name)
	}
	s := &Staged{d: d, target: target, name: name, create: create}
	for dir := path.Dir(target); dir != "."; dir = path.Dir(dir) {
		if _, err := d.Root.Lstat(dir); err == nil {
			break
		}
		s.made = append(s.made, dir)
	}
	if err := d.mkdirParent(target, name); err != nil {
		s.Abort()
		return nil, err
	}
	f, tmp, err := d.createTemp(path.Dir(target))
	if err != nil {
		s.Abort()
		return nil, err
	}
	s.tmp = tmp
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.Abort()
		return nil, d.fail(err, name)
	}
	return s, nil
}

// Commit renames the staged file into place. A create answers exists if
// something appeared at the path meanwhile (checked just before the
// rename, which then replaces whatever appears in between).
func (s *Staged) Commit() error {
	if s.tmp == "" {
		v := s.d.Visible(s.name)
		return errs.New(errs.IO, v, "The new content of %s is no longer staged.", v)
	}
	if s.create {
		if err := s.d.mustNotExist(s.target); err != nil {
			return err
		}
	}
	if err := s.d.Root.Rename(s.tmp, s.target); err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.EISDIR) {
			return s.d.isDir(s.name)
		}
		return s.d.fail(err, s.name)
	}
	s.tmp = ""
	return nil
}

// Abort removes the temporary file, if it was not committed, and the
// folders Stage created, if they are empty: after a Commit was undone by
// other means, Abort tidies up the folders.
func (s *Staged) Abort() {
	if s.tmp != "" {
		s.d.Root.Remove(s.tmp)
		s.tmp = ""
	}
	for _, dir := range s.made {
		if err := s.d.Root.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			break // not empty: something else lives there now
		}
	}
}
