package sandbox

import "strconv"

func formatMiB(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " MiB"
}
