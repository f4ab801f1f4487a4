package execbox

import (
	"io/fs"

	"corral/core/execbox/overlay"
)

// IsWhiteout reports whether fi (from Lstat in a Layer's Upper) is
// overlayfs's mark of a deleted entry (core/execbox/overlay).
func IsWhiteout(fi fs.FileInfo) bool { return overlay.IsWhiteout(fi) }

// RemoveLayers removes a layer folder (Spec.LayerDir, after its layers
// have been applied), opening permissions first (core/execbox/overlay).
func RemoveLayers(dir string) { overlay.RemoveLayers(dir) }
