package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// When the audit log cannot be written for another reason than a full
// disk (reserve.go) — the database, its -wal or its -shm made read-only or
// immutable, the file system remounted read-only, a write that fails —
// the store reports a fault: Writable answers its sentence, and callers
// refuse new operations, until a probe finds the files writable and
// commits a test transaction.
//
// The -shm file is memory-mapped by SQLite; a write into a page of an
// immutable file is a SIGBUS, which kills the process (it happens in C,
// where Go cannot turn it into a panic). So the store asks the kernel
// whether the three files are writable (access(2), which answers EPERM
// for an immutable file and EROFS for a read-only file system, even to
// root) before SQLite may write: on every Writable, before every batch,
// before each statement or transaction any connection starts (guardedConn:
// the writer's checks all three, a reader's the -shm, where it writes its
// read mark), and before every commit (a commit hook on the writer's
// connection). A file made unwritable between that check and SQLite's
// write can still crash Corral; the window is a few microseconds.

// faultProbeEvery is how often a faulted store tries a test transaction.
const faultProbeEvery = time.Second

type fault struct {
	files []string // the database, its -wal and its -shm

	mu      sync.Mutex
	err     error // the owner's sentence; nil when the store can write
	probing bool  // a probe goroutine runs
}

func (f *fault) init(dbPath string) {
	f.files = []string{dbPath, dbPath + "-wal", dbPath + "-shm"}
}

// filesWritable says which of the store's files the kernel would refuse
// to write, if any. A -wal or -shm that does not exist yet is fine:
// SQLite creates it.
func (f *fault) filesWritable() error {
	for i, name := range f.files {
		err := accessW(name)
		if err == nil || i > 0 && errors.Is(err, syscall.ENOENT) {
			continue
		}
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return nil
}

// faultError is the sentence Writable answers while the store is faulted.
func faultError(cause error) error {
	return fmt.Errorf("Corral cannot write its audit log (%v), so it refuses every agent operation. Make the file writable again; Corral resumes by itself", cause)
}

// problem returns the current fault, or nil.
func (s *Store) problem() error {
	s.flt.mu.Lock()
	defer s.flt.mu.Unlock()
	return s.flt.err
}

// markFault records that the audit log cannot be written because of
// cause, and starts the probe that clears it.
func (s *Store) markFault(cause error) {
	f := &s.flt
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		s.opts.Logger.Error("store: the audit log cannot be written; agent operations are refused until it can", "err", cause)
	}
	f.err = faultError(cause)
	if !f.probing && !s.closed() {
		f.probing = true
		go s.probe()
	}
}

// checkFiles marks a fault, and returns it, when a file is unwritable.
func (s *Store) checkFiles() error {
	if err := s.flt.filesWritable(); err != nil {
		s.markFault(err)
		return s.problem()
	}
	return nil
}

// probe runs while the store is faulted: each faultProbeEvery it checks
// the files and commits a test transaction, and clears the fault once
// both succeed.
func (s *Store) probe() {
	t := time.NewTicker(faultProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.quit:
			s.flt.mu.Lock()
			s.flt.probing = false
			s.flt.mu.Unlock()
			return
		}
		err := s.flt.filesWritable()
		if err == nil {
			err = testWrite(s.wdb)
		}
		f := &s.flt
		f.mu.Lock()
		if err != nil {
			f.err = faultError(err)
			f.mu.Unlock()
			continue
		}
		f.err, f.probing = nil, false
		f.mu.Unlock()
		s.opts.Logger.Info("store: the audit log can be written again; agent operations resume")
		return
	}
}

// testWrite commits a transaction that writes a page to the log and
// changes nothing: user_version set to itself.
func testWrite(db *sql.DB) error {
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	// PRAGMA takes no parameters; v is an integer SQLite gave us.
	_, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

// commitHook runs before each commit on the writer's connection: a
// non-zero answer turns the commit into a rollback, before SQLite writes
// the -wal or the -shm.
func (s *Store) commitHook() int {
	if err := s.flt.filesWritable(); err != nil {
		s.markFault(err)
		return 1
	}
	return 0
}

// writeFailed marks a fault for a commit that failed with err (the disk
// being full is reserve.go's business).
func (s *Store) writeFailed(err error) {
	if err == nil || diskFull(err) || errors.Is(err, os.ErrClosed) || errors.Is(err, sql.ErrConnDone) {
		return
	}
	if s.problem() != nil {
		return // keep the first cause: the commit hook's refusal reads "constraint failed"
	}
	s.markFault(err)
}

// readable refuses a reader's statement while the -shm is unwritable: a
// reader writes its mark into it, and would die of SIGBUS.
func (s *Store) readable() error {
	if err := accessW(s.flt.files[2]); err != nil && !errors.Is(err, syscall.ENOENT) {
		return faultError(fmt.Errorf("%s: %w", filepath.Base(s.flt.files[2]), err))
	}
	return nil
}
