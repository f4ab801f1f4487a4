//go:build unix

package fsbox

import (
	"testing"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// TestMoveBesideALookAlike: a folder may be moved into a sibling whose
// name merely starts like its own ("a" into "ab/"), never into itself
// ("a" into "a/"): the check is paths.Within, component by component.
func TestMoveBesideALookAlike(t *testing.T) {
	root, _ := makefs(t, "a/f = x", "ab/")
	d := openDir(t, root, "")
	errkind.Want(t, Move(d, "a", d, "a/b"), errs.Conflict, "move a into itself")
	if err := Move(d, "a", d, "ab/a"); err != nil {
		t.Fatalf("move a into ab: %v", err)
	}
	if r, err := d.Read("ab/a/f", 0, 0); err != nil || r.Content != "x" {
		t.Errorf("ab/a/f after the move: %+v %v", r, err)
	}
}
