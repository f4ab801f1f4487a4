package ui

import (
	"fmt"
	"slices"

	"corral/core/policy"
)

// queue holds the pending approvals the tray knows of, oldest first, and
// which one the dialog shows. One dialog window shows one approval at a
// time, so several requests never pile windows on top of each other.
//
// What is on screen never changes under the owner's cursor because a new
// request arrived: the shown approval changes only when it is answered
// (here or elsewhere), times out, or the owner picks another one.
type queue struct {
	items   []policy.Approval
	current string // id of the approval on screen; "" when none
}

// add inserts a, keeping the order; it reports whether a is new. The
// first approval to arrive becomes the current one.
func (q *queue) add(a policy.Approval) bool {
	if q.index(a.ID) >= 0 {
		return false
	}
	i, _ := slices.BinarySearchFunc(q.items, a, func(x, y policy.Approval) int {
		if c := x.RequestedAt.Compare(y.RequestedAt); c != 0 {
			return c
		}
		return -1 // equal times: after the ones already there
	})
	q.items = slices.Insert(q.items, i, a)
	if q.current == "" {
		q.current = a.ID
	}
	return true
}

// remove drops id; it reports whether it was the one on screen, in which
// case the oldest remaining one (if any) becomes current.
func (q *queue) remove(id string) (wasCurrent bool) {
	i := q.index(id)
	if i < 0 {
		return false
	}
	q.items = slices.Delete(q.items, i, i+1)
	if q.current != id {
		return false
	}
	q.current = ""
	if len(q.items) > 0 {
		q.current = q.items[0].ID
	}
	return true
}

// choose puts id on screen; false if it is not pending.
func (q *queue) choose(id string) bool {
	if q.index(id) < 0 {
		return false
	}
	q.current = id
	return true
}

// step moves the screen by delta places, stopping at either end; it
// reports whether the approval on screen changed.
func (q *queue) step(delta int) bool {
	i := q.index(q.current)
	if i < 0 {
		return false
	}
	j := min(max(i+delta, 0), len(q.items)-1)
	q.current = q.items[j].ID
	return j != i
}

// shown is the approval on screen.
func (q *queue) shown() (policy.Approval, bool) {
	i := q.index(q.current)
	if i < 0 {
		return policy.Approval{}, false
	}
	return q.items[i], true
}

// position is the "1 of 3" line; empty when only one is pending.
func (q *queue) position() string {
	if len(q.items) < 2 {
		return ""
	}
	return fmt.Sprintf("%d of %d", q.index(q.current)+1, len(q.items))
}

func (q *queue) len() int { return len(q.items) }

func (q *queue) list() []policy.Approval { return slices.Clone(q.items) }

func (q *queue) index(id string) int {
	if id == "" {
		return -1
	}
	return slices.IndexFunc(q.items, func(a policy.Approval) bool { return a.ID == id })
}
