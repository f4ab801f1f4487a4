package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Device is a paired phone or browser (docs/protocol.md section 9).
type Device struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Paired   time.Time `json:"paired"`
	LastSeen time.Time `json:"last_seen"`
}

// AddDevice stores a device with the SHA-256 of its token.
func (s *Store) AddDevice(ctx context.Context, d Device, token string) error {
	if s.closed() {
		return ErrClosed
	}
	h := sha256.Sum256([]byte(token))
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO devices (id, name, token_sha256, paired_ns, last_seen_ns) VALUES (?, ?, ?, ?, ?)`,
		d.ID, d.Name, h[:], d.Paired.UnixNano(), d.LastSeen.UnixNano())
	if err != nil {
		return fmt.Errorf("add device: %w", err)
	}
	return nil
}

// DeviceByToken finds the device a token belongs to. The lookup is by the
// token's hash, so the comparison never touches the secret itself.
func (s *Store) DeviceByToken(ctx context.Context, token string) (Device, bool, error) {
	if s.closed() {
		return Device{}, false, ErrClosed
	}
	h := sha256.Sum256([]byte(token))
	d, err := scanDevice(s.rdb.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE token_sha256 = ?`, h[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return Device{}, false, nil
	}
	if err != nil {
		return Device{}, false, fmt.Errorf("find device: %w", err)
	}
	return d, true, nil
}

const deviceColumns = `id, name, paired_ns, last_seen_ns`

// scanDevice reads one row of deviceColumns.
func scanDevice(row interface{ Scan(...any) error }) (Device, error) {
	var d Device
	var paired, seen int64
	if err := row.Scan(&d.ID, &d.Name, &paired, &seen); err != nil {
		return Device{}, err
	}
	d.Paired, d.LastSeen = time.Unix(0, paired).UTC(), time.Unix(0, seen).UTC()
	return d, nil
}

// TouchDevice records that a device was seen at t.
func (s *Store) TouchDevice(ctx context.Context, id string, t time.Time) error {
	if s.closed() {
		return ErrClosed
	}
	_, err := s.wdb.ExecContext(ctx, `UPDATE devices SET last_seen_ns = ? WHERE id = ?`, t.UnixNano(), id)
	return err
}

// Devices lists paired devices, oldest first.
func (s *Store) Devices(ctx context.Context) ([]Device, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices ORDER BY paired_ns, id`)
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// RemoveDevice revokes a device; it reports whether there was one.
func (s *Store) RemoveDevice(ctx context.Context, id string) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	return s.deleteByID(ctx, "remove device", `DELETE FROM devices WHERE id = ?`, id)
}
