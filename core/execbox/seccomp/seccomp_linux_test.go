package seccomp

import (
	"runtime"
	"testing"
)

// TestFilterShape: on the architectures Corral has a filter for, Filter
// returns whole 8-byte instructions, the same bytes each time.
func TestFilterShape(t *testing.T) {
	f := Filter()
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		if f != nil {
			t.Fatalf("a filter for %s, which has none", runtime.GOARCH)
		}
		return
	}
	if len(f) == 0 || len(f)%8 != 0 {
		t.Fatalf("filter of %d bytes", len(f))
	}
	if string(Filter()) != string(f) {
		t.Fatal("two calls built different filters")
	}
}
