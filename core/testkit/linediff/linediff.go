// Package linediff compares two texts by their lines, for tests that
// check a rewrite of a file (config.toml) changed only the lines it
// should: Changed counts each line, not its place, so a line moved is no
// change. It is for tests only.
package linediff

import "strings"

// Changed returns the lines only before has (removed) and those only
// after has (added), each as often as it is missing from the other, in
// the order they stand.
func Changed(before, after string) (removed, added []string) {
	count := map[string]int{}
	for _, l := range strings.Split(before, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(after, "\n") {
		if count[l] > 0 {
			count[l]--
		} else {
			added = append(added, l)
		}
	}
	for _, l := range strings.Split(before, "\n") {
		if count[l] > 0 {
			count[l]--
			removed = append(removed, l)
		}
	}
	return removed, added
}
