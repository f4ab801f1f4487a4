package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"corral/core/links"
)

// The store is the sandbox's link ledger.
var _ links.LinkLedger = (*Store)(nil)

// RecordLink keeps a link handed out. The same link made twice (same
// fields, so the same token) keeps its first record and any revocation.
func (s *Store) RecordLink(ctx context.Context, r links.LinkRecord) error {
	if s.closed() {
		return ErrClosed
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO links (id, key_id, scope, path, folder, made_by, created_ns, expires_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		r.ID, r.KeyID, r.Scope, r.Path, r.Folder, r.MadeBy, r.Created.UnixNano(), r.Expires.UnixNano())
	if err != nil {
		return fmt.Errorf("record link: %w", err)
	}
	return nil
}

// RevokedLinks returns the revoked records of key kid, scope and expiry.
func (s *Store) RevokedLinks(ctx context.Context, kid, scope string, exp time.Time) ([]links.LinkRecord, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+linkColumns+` FROM links
		WHERE scope = ? AND expires_ns = ? AND key_id = ? AND revoked_ns != 0`, scope, exp.UnixNano(), kid)
	if err != nil {
		return nil, fmt.Errorf("check links: %w", err)
	}
	return scanLinks(rows)
}

const linkColumns = `id, key_id, scope, path, folder, made_by, created_ns, expires_ns, revoked_ns, revoked_by`

func scanLink(row interface{ Scan(...any) error }) (links.LinkRecord, error) {
	var r links.LinkRecord
	var created, expires, revoked int64
	if err := row.Scan(&r.ID, &r.KeyID, &r.Scope, &r.Path, &r.Folder, &r.MadeBy, &created, &expires, &revoked, &r.RevokedBy); err != nil {
		return r, err
	}
	r.Created, r.Expires = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	if revoked != 0 {
		r.Revoked = time.Unix(0, revoked).UTC()
	}
	return r, nil
}

// Links lists records newest first (by creation, then id), as f selects.
func (s *Store) Links(ctx context.Context, f links.LinkFilter) ([]links.LinkRecord, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	q := `SELECT ` + linkColumns + ` FROM links WHERE 1`
	var args []any
	if !f.All {
		q += ` AND revoked_ns = 0 AND expires_ns > ? AND key_id = ?`
		args = append(args, f.Now.UnixNano(), f.KeyID)
	}
	if f.After != nil {
		q += ` AND (created_ns < ? OR (created_ns = ? AND id < ?))`
		c := f.After.Created.UnixNano()
		args = append(args, c, c, f.After.ID)
	}
	q += ` ORDER BY created_ns DESC, id DESC LIMIT ?`
	args = append(args, max(f.Limit, 1))
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	return scanLinks(rows)
}

func scanLinks(rows *sql.Rows) ([]links.LinkRecord, error) {
	defer rows.Close()
	var out []links.LinkRecord
	for rows.Next() {
		r, err := scanLink(rows)
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RevokeLink marks id revoked by by at at, keeping an earlier revocation,
// and returns the record.
func (s *Store) RevokeLink(ctx context.Context, id, by string, at time.Time) (links.LinkRecord, error) {
	if s.closed() {
		return links.LinkRecord{}, ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, `UPDATE links SET revoked_ns = ?, revoked_by = ? WHERE id = ? AND revoked_ns = 0`, at.UnixNano(), by, id); err != nil {
		return links.LinkRecord{}, fmt.Errorf("revoke link: %w", err)
	}
	r, err := scanLink(s.wdb.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM links WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, links.ErrNoLink
	}
	if err != nil {
		return r, fmt.Errorf("revoke link: %w", err)
	}
	return r, nil
}
