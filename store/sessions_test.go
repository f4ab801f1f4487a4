package store

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"
)

// TestSessionsSurviveReopen: a session kept by its hash is there after the
// database is closed and opened again, until it expires or ends.
func TestSessionsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "corral.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	live, ended, old := sha256.Sum256([]byte("live")), sha256.Sum256([]byte("ended")), sha256.Sum256([]byte("old"))
	for h, exp := range map[[32]byte]time.Time{live: now.Add(time.Hour), ended: now.Add(time.Hour), old: now.Add(-time.Second)} {
		if err := st.AddSession(ctx, h, exp); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.EndSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Sessions(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[live].UnixNano() != now.Add(time.Hour).UnixNano() {
		t.Fatalf("sessions after reopen = %v; want only the live one, expiring in an hour", got)
	}
}
