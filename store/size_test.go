package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"corral/core/audit"
)

func TestLogSize(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s, err := Open(filepath.Join(t.TempDir(), "corral.db"), Options{Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 30 {
		if _, err := s.Record(ctx, audit.Event{Time: now.Add(-time.Duration(i) * time.Minute * 4), Client: "a", Op: "file.read", Target: "x", Decision: audit.Allow}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LogSize(ctx, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.EventsSince != 16 { // 0, 4 … 60 minutes ago
		t.Errorf("events in the last hour: %d, want 16", got.EventsSince)
	}
	if got.DBBytes <= 0 || got.WALBytes <= 0 {
		t.Errorf("sizes: %+v, want the file and its WAL", got)
	}
}
