package sandbox

import (
	"strings"
	"testing"
	"time"

	"corral/core/links"
)

// Every open of a link computes the ids of all the folders above its path.
// Each id hashes its whole path, so the cost grows with the square of the
// depth: the deepest path Corral accepts (2048 components) against an
// ordinary one (4 components) as the reference.
func BenchmarkRevocationIDs(b *testing.B) {
	for _, bc := range []struct {
		name string
		path string
	}{
		{"reference_4_deep", "output/a/b/c.txt"},
		{"deepest_2048", strings.TrimSuffix(strings.Repeat("a/", 2048), "/")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := links.Claims{Scope: "alice", Path: bc.path, Expires: time.Unix(2e9, 0)}
			for b.Loop() {
				revocationIDs("k", c)
			}
		})
	}
}
