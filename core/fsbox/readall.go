package fsbox

import (
	"io"

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
	f, fi, err := d.openRegular(name, slash)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := d.Visible(name)
	tooLarge := errs.New(errs.TooLarge, v, "%s is larger than %d MiB, so it was not read.", v, max>>20)
	if fi.Size() > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, d.fail(err, name)
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}
