package store

// A WAL checkpoint copies committed pages from the -wal file into the
// database file. SQLite normally runs one inside whichever COMMIT crosses
// 1000 pages, on the writer's time; here the writer turns that off and
// another goroutine checkpoints on a reader connection, in parallel with
// the next batches.

// kickCheckpoint counts n committed events and wakes the checkpointer
// every MaxWALPages/2 of them (a batched event adds well under a page to
// the WAL), without waiting for it.
func (s *Store) kickCheckpoint(n int) {
	s.uncheckpointed += n
	if s.uncheckpointed < s.opts.MaxWALPages/2 {
		return
	}
	s.uncheckpointed = 0
	select {
	case s.ckptKick <- struct{}{}:
	default: // one is already due
	}
}

// checkpointer runs until the writer has stopped; Close's last connection
// checkpoints whatever is left.
func (s *Store) checkpointer() {
	defer close(s.ckptDone)
	for {
		select {
		case <-s.ckptKick:
		case <-s.stopped:
			return
		}
		if err := s.checkpoint(); err != nil {
			s.opts.Logger.Warn("audit store: checkpoint", "err", err)
		}
	}
}

func (s *Store) checkpoint() error {
	if err := s.checkFiles(); err != nil {
		return err // no checkpoint into files SQLite cannot write (fault.go)
	}
	var busy, frames, copied int
	if err := s.rdb.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return err
	}
	// Under steady load a passive checkpoint never quite catches up, and
	// the log only starts over once it has. RESTART waits for a gap
	// between batches, copies the rest and makes the next batch start the
	// log from the beginning.
	if frames >= s.opts.MaxWALPages {
		if _, err := s.rdb.Exec("PRAGMA wal_checkpoint(RESTART)"); err != nil {
			return err
		}
	}
	return nil
}
