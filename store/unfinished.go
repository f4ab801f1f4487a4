package store

import (
	"context"

	"corral/core/audit"
)

var _ audit.Unfinisher = (*Store)(nil)

// unfinishedWhere is the condition of the partial index
// audit_events_unfinished (migration 010), written exactly as there so
// that SQLite uses it.
const unfinishedWhere = `substr(detail, -7) IN ('running', 'pending')`

// Unfinished returns the events whose detail still ends with
// audit.Running or audit.Pending (recorded before their operation, never
// completed), newest first by id, at most limit (1..10000).
func (s *Store) Unfinished(ctx context.Context, limit int) ([]audit.Event, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	limit = min(10000, max(1, limit))
	q := `SELECT ` + eventColumns + ` FROM audit_events WHERE ` + unfinishedWhere + ` ORDER BY id DESC LIMIT ?`
	p, err := s.page(ctx, q, []any{limit + 1}, limit)
	if err != nil {
		return nil, err
	}
	return p.Events, nil
}
