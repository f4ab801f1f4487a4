package fsbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"corral/core/errs"
)

// PriorEntry is one thing at a path before a change (see Prior).
type PriorEntry struct {
	Rel  string      // slash path in the Dir
	Info fs.FileInfo // from Lstat
	// File is open for reading for a regular file with one link, and nil
	// for anything else (a folder, a symlink, a hard-linked or special
	// file). Prior closes it after fn returns.
	File *os.File
	Link string // a symlink's target
}

// Prior calls fn with what is at rel of d, before a change replaces or
// removes it: nothing when nothing is there (or rel is not a clean path:
// the change itself will answer that); the file, when rel is a file (with
// follow, a symlink at rel is followed inside the root, as Write follows
// it); and when rel is a folder, the folder and every entry below it in
// tree order, without following symlinks, at most MaxWalkEntries entries
// (truncated then set). Files are opened through the root and checked as
// Read checks them. An error from fn stops Prior and is returned.
func (d Dir) Prior(rel string, follow bool, fn func(PriorEntry) error) (truncated bool, err error) {
	name, _, err := d.name(rel)
	if err != nil || name == "." {
		return false, nil
	}
	target := name
	if follow {
		if target, err = d.resolveLinks(name); err != nil {
			return false, nil
		}
	}
	fi, err := d.Root.Lstat(target)
	if err != nil {
		return false, nil
	}
	if !fi.IsDir() {
		return false, d.priorOne(target, fi, fn)
	}
	if err := fn(PriorEntry{Rel: target, Info: fi}); err != nil {
		return false, err
	}
	var ferr error
	truncated, err = d.walk(target, 1<<30, nil, func(cname, _ string, fi fs.FileInfo) bool {
		ferr = d.priorOne(cname, fi, fn)
		return ferr != nil
	})
	if ferr != nil {
		return truncated, ferr
	}
	if err != nil {
		return false, nil
	}
	return truncated, nil
}

func (d Dir) priorOne(name string, fi fs.FileInfo, fn func(PriorEntry) error) error {
	e := PriorEntry{Rel: name, Info: fi}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Link, _ = d.Root.Readlink(name)
	case fi.Mode().IsRegular() && nlink(fi) == 1:
		if f, _, err := d.openChecked(d.Root, name, name, fi); err == nil {
			e.File = f
			defer f.Close()
		}
	}
	return fn(e)
}

// Replacement is one edit of EditText: Old, exactly as it is in the file,
// becomes New; Old must occur once unless All.
type Replacement struct {
	Old string
	New string
	All bool
}

// EditText applies edits in order to the text file rel of d and returns
// the content before and after and how many replacements each edit made.
// An edit whose Old text is empty, missing or (without All) not unique
// answers invalid_params or conflict naming the edit, and nothing is
// written. Unless dryRun, the new content replaces the file atomically
// (through a symlink at rel, as Write does). The file is read once and
// written once, so it is either all edits or none.
func (d Dir) EditText(rel string, edits []Replacement, dryRun bool) (before, after []byte, counts []int, err error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, nil, nil, err
	}
	v := d.Visible(name)
	if len(edits) == 0 {
		return nil, nil, nil, errs.New(errs.InvalidParams, v, "Give at least one edit (old_text and new_text).")
	}
	which := func(i int) string {
		if len(edits) == 1 {
			return ""
		}
		return "Edit " + strconv.Itoa(i+1) + ": "
	}
	for i, e := range edits {
		if e.Old == "" {
			return nil, nil, nil, errs.New(errs.InvalidParams, v, "%sThe text to replace is empty; give the exact text to change.", which(i))
		}
	}
	if name == "." {
		return nil, nil, nil, d.isDir(name)
	}
	data, _, err := d.readWhole(name, slash, MaxEditBytes, func(size int64) error {
		if size < 0 {
			return errs.New(errs.TooLarge, v, "%s is larger than %d bytes; Corral edits files up to that size.", v, MaxEditBytes)
		}
		return errs.New(errs.TooLarge, v, "%s is %d bytes; Corral edits files up to %d bytes.", v, size, MaxEditBytes)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if !IsText(data) {
		return nil, nil, nil, errs.New(errs.Binary, v, "%s is a binary file, so it can't be edited as text.", v)
	}
	content := string(data)
	counts = make([]int, len(edits))
	for i, e := range edits {
		n := strings.Count(content, e.Old)
		switch {
		case n == 0:
			return nil, nil, nil, errs.New(errs.Conflict, v, "%sThe text to replace was not found in %s.", which(i), v)
		case n > 1 && !e.All:
			return nil, nil, nil, errs.New(errs.Conflict, v, "%sThe text to replace appears %d times in %s; include more of the surrounding text to make it unique, or ask to replace all.", which(i), n, v)
		}
		if !e.All {
			n = 1
		}
		content = strings.Replace(content, e.Old, e.New, n)
		counts[i] = n
	}
	after = []byte(content)
	if dryRun {
		return data, after, counts, nil
	}
	target, err := d.resolveLinks(name)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := d.replace(target, name, func(w io.Writer) error {
		_, err := w.Write(after)
		return err
	}); err != nil {
		return nil, nil, nil, err
	}
	return data, after, counts, nil
}

// RemoveEntry removes the file, symlink or empty folder rel of d and
// answers nil when nothing is there. It is for putting back an earlier
// state: a folder that is not empty answers conflict.
func (d Dir) RemoveEntry(rel string) error {
	name, _, err := d.name(rel)
	if err != nil {
		return err
	}
	if name == "." {
		return errs.New(errs.Denied, d.Visible(name), "%s is the top of its area; Corral will not remove it.", d.Visible(name))
	}
	if err := d.Root.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist) {
			v := d.Visible(name)
			return errs.Wrap(err, errs.Conflict, v, "%s is a folder that is not empty.", v)
		}
		return d.fail(err, name)
	}
	return nil
}

// PutFile makes rel of d a regular file holding data with permission bits
// perm (0: 0644), replacing a file (not a folder) that is there,
// atomically; missing parent folders are created. A symlink at rel is
// replaced, not written through: this puts back exactly what was at rel.
func (d Dir) PutFile(rel string, data []byte, perm fs.FileMode) error {
	name, _, err := d.name(rel)
	if err != nil {
		return err
	}
	if name == "." {
		return d.isDir(name)
	}
	if perm == 0 {
		perm = 0o644
	}
	if err := d.mkdirParent(name, name); err != nil {
		return err
	}
	if fi, err := d.Root.Lstat(name); err == nil {
		switch {
		case fi.IsDir():
			return d.isDir(name)
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := d.Root.Remove(name); err != nil {
				return d.fail(err, name)
			}
		}
	}
	if err := d.replace(name, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return err
	}
	return d.Root.Chmod(name, perm)
}

// PutLink makes rel of d a symlink to target, replacing a file or link
// there. Absolute targets are refused, as the root would refuse to follow
// them.
func (d Dir) PutLink(rel, target string) error {
	name, _, err := d.name(rel)
	if err != nil {
		return err
	}
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) {
		return errs.New(errs.Denied, d.Visible(name), "Corral does not make links that leave their folder.")
	}
	if err := d.mkdirParent(name, name); err != nil {
		return err
	}
	if fi, err := d.Root.Lstat(name); err == nil {
		if fi.IsDir() {
			return d.isDir(name)
		}
		if err := d.Root.Remove(name); err != nil {
			return d.fail(err, name)
		}
	}
	if err := d.Root.Symlink(target, name); err != nil {
		return d.fail(err, name)
	}
	return nil
}

// Mkdir makes the folder rel of d and its parents; an existing folder is
// fine.
func (d Dir) Mkdir(rel string) error {
	name, _, err := d.name(rel)
	if err != nil {
		return err
	}
	if name == "." {
		return nil
	}
	if err := d.Root.MkdirAll(name, 0o755); err != nil {
		return d.fail(err, name)
	}
	return nil
}
