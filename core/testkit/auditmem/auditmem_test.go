package auditmem

import (
	"context"
	"errors"
	"slices"
	"testing"

	"corral/core/audit"
)

func TestJournal(t *testing.T) {
	ctx := context.Background()
	var j Journal
	for _, e := range []audit.Event{{Op: "file.write", Detail: audit.Pending}, {Op: "command.run", Detail: audit.Running}, {Op: "file.read"}} {
		if _, err := j.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Complete(ctx, audit.Event{ID: 1, Op: "file.write", Detail: "done"}); err != nil {
		t.Fatal(err)
	}
	left, _ := j.Unfinished(ctx, 10)
	if len(left) != 1 || left[0].ID != 2 || left[0].Op != "command.run" {
		t.Errorf("unfinished: %+v", left)
	}
	if got := j.Ops(); !slices.Equal(got, []string{"file.write", "command.run", "file.read"}) || j.Len() != 3 || j.Last().Op != "file.read" {
		t.Errorf("ops %v, len %d, last %+v", got, j.Len(), j.Last())
	}
	full := errors.New("disk full")
	j.Fail(full)
	if _, err := j.Record(ctx, audit.Event{Op: "x"}); err != full {
		t.Errorf("record on a full disk: %v", err)
	}
	if err := j.Complete(ctx, audit.Event{ID: 2}); err != full {
		t.Errorf("complete on a full disk: %v", err)
	}
	if j.Len() != 3 || j.Events()[1].Detail != audit.Running {
		t.Errorf("a failed call changed the log: %+v", j.Events())
	}
	var l Log
	if _, ok := any(&l).(audit.Completer); ok || l.Last().Op != "" {
		t.Error("a Log completes events, or an empty one has a last event")
	}
}
