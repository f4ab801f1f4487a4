package fsbox

import "os"

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
