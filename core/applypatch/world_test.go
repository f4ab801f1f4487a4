package applypatch

import (
	"testing"

	"corral/core/sandbox"
	"corral/core/sandbox/sandboxtest"
)

// world is a sandbox over a temporary folder (sandboxtest.World) and its
// patch service.
type world struct {
	*sandboxtest.World
	svc *Service
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldWith(t, nil)
}

// newWorldWith is newWorld with the sandbox's Config changed by set first.
func newWorldWith(t testing.TB, set func(w *sandboxtest.World, cfg *sandbox.Config)) *world {
	t.Helper()
	w := sandboxtest.New(t, set)
	return &world{World: w, svc: New(w.Box)}
}

var alice = sandboxtest.Alice
