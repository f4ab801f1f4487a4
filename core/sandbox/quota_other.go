//go:build !unix

package sandbox

import "io/fs"

// allocated is the disk space a file uses; without Unix's block count,
// its length.
func allocated(info fs.FileInfo) int64 { return info.Size() }
