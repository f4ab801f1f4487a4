package execbox

// platformWhy is "" on Linux: commands run under bubblewrap here
// (platform_other.go says what other systems get).
func platformWhy() string { return "" }
