package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/audit"
)

// TestUnfinished: the events recorded before their operation and never
// completed are listed, newest first, through the partial index; a
// completed one is not.
func TestUnfinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "a.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := func(detail string) int64 {
		t.Helper()
		id, err := s.Record(ctx, audit.Event{Client: "c", User: "u", Op: "file.write", Target: "a", Decision: audit.Allow, Detail: detail})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	run := rec("running")
	rec("exit 0")
	pend := rec("append; pending")
	done := rec("pending")
	rec("the pending file")
	if err := s.Complete(ctx, audit.Event{ID: done, Decision: audit.Allow, Detail: "append"}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Unfinished(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != pend || evs[1].ID != run {
		t.Fatalf("unfinished: %+v", evs)
	}
	var plan strings.Builder
	rows, err := s.rdb.Query(`EXPLAIN QUERY PLAN SELECT id FROM audit_events WHERE ` + unfinishedWhere + ` ORDER BY id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, c int
		var d string
		rows.Scan(&a, &b, &c, &d)
		plan.WriteString(d + "\n")
	}
	if !strings.Contains(plan.String(), "audit_events_unfinished") {
		t.Errorf("the query does not use the partial index:\n%s", plan.String())
	}
}
