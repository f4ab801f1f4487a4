//go:build !linux

package overlay

import (
	"io/fs"
	"os"
)

// IsWhiteout reports false: only overlayfs makes whiteouts.
func IsWhiteout(fi fs.FileInfo) bool { return false }

// RemoveLayers removes a layer folder.
func RemoveLayers(dir string) { _ = os.RemoveAll(dir) }
