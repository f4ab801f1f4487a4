package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// LogSize is how much room the database takes on disk and how fast the
// audit log grows.
type LogSize struct {
	DBBytes  int64 // the database file
	WALBytes int64 // its write-ahead log, until the next checkpoint
	// EventsSince counts the events whose time is at or after the time
	// LogSize was asked about.
	EventsSince int64
}

// LogSize reports the database's size on disk and the audit events
// recorded since since. The sizes are the files' as the system sees them
// now; a missing WAL counts as 0.
func (s *Store) LogSize(ctx context.Context, since time.Time) (LogSize, error) {
	var out LogSize
	db := strings.TrimSuffix(s.res.path, ".reserve") // openReserve names it after the database
	fi, err := os.Stat(db)
	if err != nil {
		return out, fmt.Errorf("audit log size: %w", err)
	}
	out.DBBytes = fi.Size()
	if fi, err := os.Stat(db + "-wal"); err == nil {
		out.WALBytes = fi.Size()
	}
	err = s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM audit_events WHERE time_ns >= ?`, since.UnixNano()).Scan(&out.EventsSince)
	if err != nil {
		return out, fmt.Errorf("audit log size: %w", err)
	}
	return out, nil
}
