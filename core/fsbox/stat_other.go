//go:build !unix

package fsbox

import "io/fs"

// Without Unix's stat there are no link counts, inodes or owners to
// check: a file counts as linked once, a folder is not recognised when a
// walk meets it again (the walk's depth still bounds it), and Settle
// changes no owner. O_DIRECTORY does not exist; openDir's own check of
// the opened handle refuses what is not a folder.
const oDirectory = 0

func nlink(fi fs.FileInfo) uint64 { return 1 }

func idOf(fi fs.FileInfo) (fileID, bool) { return fileID{}, false }

func owner(fi fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
