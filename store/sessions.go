package store

import (
	"context"
	"fmt"
	"time"
)

// AddSession keeps a browser session by the SHA-256 of its id until
// expires.
func (s *Store) AddSession(ctx context.Context, idSHA256 [32]byte, expires time.Time) error {
	if s.closed() {
		return ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, `INSERT OR REPLACE INTO sessions (id_sha256, expires_ns) VALUES (?, ?)`, idSHA256[:], expires.UnixNano()); err != nil {
		return fmt.Errorf("add session: %w", err)
	}
	return nil
}

// EndSession forgets a session (signed out).
func (s *Store) EndSession(ctx context.Context, idSHA256 [32]byte) error {
	if s.closed() {
		return ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, `DELETE FROM sessions WHERE id_sha256 = ?`, idSHA256[:]); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// Sessions forgets the sessions expired by now and returns the others:
// the SHA-256 of each id and its expiry.
func (s *Store) Sessions(ctx context.Context, now time.Time) (map[[32]byte]time.Time, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, `DELETE FROM sessions WHERE expires_ns <= ?`, now.UnixNano()); err != nil {
		return nil, fmt.Errorf("prune sessions: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT id_sha256, expires_ns FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	out := map[[32]byte]time.Time{}
	for rows.Next() {
		var h []byte
		var exp int64
		if err := rows.Scan(&h, &exp); err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		if len(h) != 32 {
			continue // not ours: never a session
		}
		out[[32]byte(h)] = time.Unix(0, exp)
	}
	return out, rows.Err()
}
