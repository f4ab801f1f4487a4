package links

import (
	"strings"
	"testing"
	"time"
)

// Every open of a link checks it against the revoked links of its key,
// scope and expiry. The check is linear in the path's length: the deepest
// path Corral accepts (2048 components) against an ordinary one (4
// components) as the reference, each against 16 revoked folder links.
// (Hashing an id per folder above the path, as first built, cost 35 ms at
// the deepest against 7 µs.)
func BenchmarkRevocationCheck(b *testing.B) {
	for _, bc := range []struct {
		name string
		path string
	}{
		{"reference_4_deep", "output/a/b/c.txt"},
		{"deepest_2048", strings.TrimSuffix(strings.Repeat("a/", 2048), "/")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := Claims{Scope: "alice", Path: bc.path, Expires: time.Unix(2e9, 0)}
			var revoked []LinkRecord
			for i := range 16 {
				revoked = append(revoked, LinkRecord{Path: bc.path[:len(bc.path)/(i+2)] + "x", Folder: true})
			}
			for b.Loop() {
				for _, r := range revoked {
					if closes(r, c) {
						b.Fatal("closed")
					}
				}
			}
		})
	}
}
