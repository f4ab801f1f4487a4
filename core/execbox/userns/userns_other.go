//go:build !linux

package userns

// Refused says commands need Linux: there are no user namespaces elsewhere.
func Refused(probe string) string {
	return "Commands need Linux: Corral runs them under bubblewrap, which this system does not have."
}
