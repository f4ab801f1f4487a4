package sandbox

import (
	"io/fs"
	"strconv"
	"syscall"
)

// allocated is the disk space a file uses: its blocks, not its length.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}

func formatMiB(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " MiB"
}
