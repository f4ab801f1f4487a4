package server

import (
	"path/filepath"
	"testing"

	"corral/store"
)

func reopen(t *testing.T, h *harness) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(h.dir, "corral.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
