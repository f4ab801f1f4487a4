package undo

import (
	"corral/core/audit"
	"corral/core/killpoint"
	"corral/core/sandbox"
)

// RollBack is sandbox.Recover's roll back: it puts back what it can of
// the changes of ev, an event a crash left unfinished, as o, the way the
// owner's undo would, and returns the changes it left as they are (changed
// again since, or not kept), in the order ev lists them, and how many it
// put back.
func (s *Service) RollBack(o *sandbox.Op, ev audit.Event) (left []audit.Change, put int) {
	for _, st := range s.planUndo(ev) {
		f := st.file
		switch {
		case f.Conflict != "":
			s.box.Logger().Warn("recover: change left as it is", "id", ev.ID, "path", f.Path, "why", f.Conflict)
			left = append(left, st.change)
		case f.Action == "none":
		default:
			if err := s.applySteps(o, []*undoStep{st}); err != nil {
				s.box.Logger().Error("recover: change not put back", "id", ev.ID, "path", f.Path, "err", err)
				left = append(left, st.change)
				continue
			}
			put++
			killpoint.Here("recover.change")
		}
	}
	// planUndo lists the changes newest first; the event keeps them in
	// the order they were made.
	for i, j := 0, len(left)-1; i < j; i, j = i+1, j-1 {
		left[i], left[j] = left[j], left[i]
	}
	return left, put
}
