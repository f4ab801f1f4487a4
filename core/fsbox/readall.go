package fsbox

import (
	"io"
	"io/fs"

	"corral/core/errs"
)

// ReadAll returns the whole content of the regular file rel, with the
// checks of Read (no special files, no hard-linked files, symlinks only
// inside the root). A file larger than max bytes answers too_large.
func (d Dir) ReadAll(rel string, max int64) ([]byte, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return nil, err
	}
	data, _, err := d.readWhole(name, slash, max, func(int64) error {
		v := d.Visible(name)
		return errs.New(errs.TooLarge, v, "%s is larger than %d MiB, so it was not read.", v, max>>20)
	})
	return data, err
}

// readWhole opens the regular file name as Read does and reads all of it.
// A file over max bytes answers tooLarge(its size), or tooLarge(-1) when
// it grew past max while it was read.
func (d Dir) readWhole(name string, slash bool, max int64, tooLarge func(size int64) error) ([]byte, fs.FileInfo, error) {
	f, fi, err := d.openRegular(name, slash)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, nil, tooLarge(fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, d.fail(err, name)
	}
	if int64(len(data)) > max {
		return nil, nil, tooLarge(-1)
	}
	return data, fi, nil
}
