package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// A full disk must not cost the audit log. The store keeps a reserve: a
// file of Options.Reserve bytes beside the database, allocated at start.
// When a commit fails because the disk is full, the reserve is given up
// and the commit tried again, so what was being recorded is recorded; the
// store then reports itself unwritable (Writable) until the disk has room
// for the reserve again, when it takes the reserve back. Callers refuse
// new operations meanwhile.
//
// Opened on a disk with less room than the reserve, the store starts full
// (startReserve): the daemon starts, refuses, and resumes by itself.

// DefaultReserve is Options.Reserve's default.
const DefaultReserve = 16 << 20

type reserve struct {
	path    string
	size    int64
	full    atomic.Bool
	checked atomic.Int64 // unix nanos of the last free-space check while full
}

// startReserve runs before SQLite opens the database. On a disk with less
// room than the reserve, it starts the store full: the reserve left by
// the last run is given up, so SQLite has the room it needs to open
// (after a clean stop it creates the -wal and a 32 KiB -shm), and
// operations are refused until there is room again. Without this Corral
// could not start on a full disk.
func (s *Store) startReserve(dbPath string) {
	r := &s.res
	r.path, r.size = dbPath+".reserve", s.opts.Reserve
	if free, err := freeSpace(filepath.Dir(r.path)); err == nil && free < max(r.size, 4<<20) {
		s.markFull()
	}
}

// openReserve takes the reserve once the database is open, unless the
// store started full.
func (s *Store) openReserve() {
	r := &s.res
	if r.size <= 0 || r.full.Load() {
		return
	}
	if err := r.take(); err != nil {
		if diskFull(err) {
			// Start anyway, refusing operations until there is room
			// (Writable), rather than run without the reserve.
			s.markFull()
			return
		}
		s.opts.Logger.Warn("store: no reserve for a full disk", "path", r.path, "err", err)
	}
}

// take allocates the reserve file (again).
func (r *reserve) take() error {
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fallocate(f, r.size); err != nil {
		os.Remove(r.path)
		return err
	}
	return f.Sync()
}

// markFull gives the reserve up and marks the store unwritable.
func (s *Store) markFull() {
	r := &s.res
	if r.full.Swap(true) {
		return
	}
	s.opts.Logger.Error("store: the disk holding the audit log is full; new operations are refused until there is room", "path", filepath.Dir(r.path))
	if r.size > 0 {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.opts.Logger.Error("store: could not release the reserve", "err", err)
		}
	}
}

// Writable reports whether events can be recorded now (audit.Health):
// not while the store is faulted (fault.go) or the disk is full. While
// the disk is full it checks, at most once a second, whether there is
// room for the reserve and a margin again, and if so takes the reserve
// back and answers nil.
func (s *Store) Writable() error {
	if err := s.checkFiles(); err != nil {
		return err
	}
	if err := s.problem(); err != nil {
		return err
	}
	r := &s.res
	if !r.full.Load() {
		return nil
	}
	now := time.Now().UnixNano()
	if last := r.checked.Load(); now-last < int64(time.Second) || !r.checked.CompareAndSwap(last, now) {
		return r.fullError()
	}
	free, err := freeSpace(filepath.Dir(r.path))
	if err != nil || free < 2*max(r.size, 4<<20) {
		return r.fullError()
	}
	if r.size > 0 {
		if err := r.take(); err != nil {
			return r.fullError()
		}
	}
	r.full.Store(false)
	s.opts.Logger.Info("store: there is room on the disk again; recording resumes")
	return nil
}

func (r *reserve) fullError() error {
	return fmt.Errorf("Corral cannot write its audit log: the disk holding it (%s) is full. Free some space there; Corral resumes by itself", filepath.Dir(r.path))
}
