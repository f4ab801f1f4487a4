package server

import (
	"testing"

	"corral/store"
)

func reopen(t *testing.T, h *harness) *store.Store {
	t.Helper()
	st, err := store.Open(h.files.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
