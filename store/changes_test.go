package store

import (
	"reflect"
	"testing"

	"corral/core/audit"
)

// TestChangesColumn pins the changes column's JSON: rows written by
// earlier Corrals must read back, and rows written now must read in
// them, so these bytes never change.
func TestChangesColumn(t *testing.T) {
	cs := []audit.Change{
		{Path: "b", Kind: audit.Moved, From: "a", SizeBefore: 1, SizeAfter: 2, Version: "v", After: "w", Mode: 0o755, Link: "l", NotKept: "too_large", Dir: true},
		{Path: "c", Kind: audit.Created},
	}
	const want = `[{"path":"b","kind":"moved","from":"a","size_before":1,"size_after":2,"version":"v","after":"w","mode":493,"link":"l","not_kept":"too_large","dir":true},{"path":"c","kind":"created","size_before":0,"size_after":0}]`
	if got := changesJSON(cs); got != want {
		t.Errorf("changes column\n got %s\nwant %s", got, want)
	}
	back, err := parseChanges(want)
	if err != nil || !reflect.DeepEqual(back, cs) {
		t.Errorf("read back %+v, %v", back, err)
	}
	if got := changesJSON(nil); got != "" {
		t.Errorf("no changes: %q", got)
	}
}
