package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"corral/core/audit"
)

const (
	insertSQL = `INSERT INTO audit_events
	(id, time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes, answer, answered_by, rule)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertValues = `, (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// Complete's UPDATE, in three statements: the columns that no index
	// holds but the detail (which only audit_events_unfinished does),
	// then decision and changes only where they differ. SQLite rewrites
	// every index holding a column an UPDATE sets, equal or not, and each
	// index page rewritten is one more page in the log: a write's
	// completion rarely changes its decision or its changes.
	updateSQL         = `UPDATE audit_events SET decided_by = ?, detail = ?, bytes = ?, duration_ms = ?, error = ?, answer = ?, answered_by = ?, rule = ? WHERE id = ?`
	updateDecisionSQL = `UPDATE audit_events SET decision = ?1 WHERE id = ?2 AND decision <> ?1`
	updateChangesSQL  = `UPDATE audit_events SET changes = ?1 WHERE id = ?2 AND changes <> ?1`

	// insertRows is the most events one multi-row INSERT stores; a batch
	// is written insertRows at a time, the rest in one statement.
	insertRows = 32
)

// How long the writer waits for more events before a commit: at most
// maxYields yields, no more once maxIdleYields in a row brought nothing,
// and none begun maxGather after the first.
const (
	maxYields     = 16
	maxIdleYields = 3
	maxGather     = time.Millisecond
)

// pruneChunk is how many events one Prune transaction deletes, so the
// writer is never held for long and Records interleave with a big prune.
const pruneChunk = 5000

// The times Record can store: Unix nanoseconds fit an int64 only in
// 1677–2262.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

type result struct {
	id  int64
	err error
}

type recordReq struct {
	ev     audit.Event
	update bool        // Complete: ev.ID names a row to overwrite
	done   chan result // buffered 1: the writer never blocks answering
}

type pruneReq struct {
	before int64
	done   chan result // id holds the number of rows deleted
}

// Record stores e and returns its id once its transaction has committed.
// A zero e.Time is stamped with Options.Clock; e.ID is ignored. If ctx ends
// before the event is queued it is not stored; if it ends while the commit
// is pending, Record returns ctx's error and the event may still be stored.
func (s *Store) Record(ctx context.Context, e audit.Event) (int64, error) {
	return s.queueEvent(ctx, e, false)
}

// Complete overwrites the event e.ID, recorded earlier, with e (its time
// stays), and returns once that is committed; subscribers receive the
// completed event again under the same id.
func (s *Store) Complete(ctx context.Context, e audit.Event) error {
	if e.ID <= 0 {
		return fmt.Errorf("complete audit event: no id")
	}
	_, err := s.queueEvent(ctx, e, true)
	return err
}

func (s *Store) queueEvent(ctx context.Context, e audit.Event, update bool) (int64, error) {
	if e.Time.IsZero() {
		e.Time = s.opts.Clock()
	}
	if e.Time.Before(minTime) || e.Time.After(maxTime) {
		return 0, fmt.Errorf("record audit event: time %s out of range", e.Time.UTC().Format(time.RFC3339))
	}
	e.Time = time.Unix(0, e.Time.UnixNano()).UTC() // as Query will return it
	if s.closed() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("record audit event: %w", err)
	}
	r := &recordReq{ev: e, update: update, done: make(chan result, 1)}
	select {
	case s.queue <- r:
	case <-s.quit:
		return 0, ErrClosed
	case <-ctx.Done():
		return 0, fmt.Errorf("record audit event: %w", ctx.Err())
	}
	select {
	case res := <-r.done:
		return res.id, res.err
	case <-s.stopped:
		// The writer has flushed and gone; it answered r unless r slipped
		// into the queue after its last look.
		select {
		case res := <-r.done:
			return res.id, res.err
		default:
			return 0, ErrClosed
		}
	case <-ctx.Done():
		return 0, fmt.Errorf("record audit event: %w", ctx.Err())
	}
}

// Prune deletes the events whose time is before `before`, a chunk per
// transaction, and returns how many it deleted. Records queued meanwhile
// are committed between chunks. If ctx ends, Prune stops after the current
// chunk and returns the count so far with ctx's error.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	cutoff := clampNanos(before)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("prune audit events: %w", err)
		}
		p := &pruneReq{before: cutoff, done: make(chan result, 1)}
		select {
		case s.prunes <- p: // unbuffered: the writer has taken it and will answer
		case <-s.quit:
			return total, ErrClosed
		case <-ctx.Done():
			return total, fmt.Errorf("prune audit events: %w", ctx.Err())
		}
		res := <-p.done
		total += res.id
		if res.err != nil {
			return total, res.err
		}
		if res.id < pruneChunk {
			return total, nil
		}
	}
}

// run is the writer goroutine, the only one that writes audit events.
func (s *Store) run() {
	defer close(s.stopped)
	batch := make([]*recordReq, 0, s.opts.MaxBatch)
	for {
		select {
		case r := <-s.queue:
			batch = s.gather(append(batch[:0], r))
			// Under load, producers are about to queue again (the last
			// commit answered them, or they are finishing their work):
			// yield while events keep arriving, so a busy writer commits
			// big batches instead of many small ones. A transaction costs
			// far more than a row. A quiet writer stops after a few empty
			// yields, which cost next to nothing when nothing else runs.
			//
			// The gathering also ends maxGather after it began: when
			// goroutines are busy on the CPU, one yield costs their
			// time slices, and sixteen of them held every caller's
			// answer (another agent's too) for hundreds of milliseconds.
			began := time.Now()
			for i, idle := 0, 0; i < maxYields && idle < maxIdleYields && len(batch) < s.opts.MaxBatch && time.Since(began) < maxGather; i++ {
				n := len(batch)
				runtime.Gosched()
				if batch = s.gather(batch); len(batch) == n {
					idle++
				} else {
					idle = 0
				}
			}
			s.commit(batch)
		case p := <-s.prunes:
			p.done <- s.deleteChunk(p.before)
		case <-s.quit:
			for {
				batch = s.gather(batch[:0])
				if len(batch) == 0 {
					return
				}
				s.commit(batch)
			}
		}
	}
}

// gather adds whatever is already queued to batch, up to MaxBatch, without
// waiting.
func (s *Store) gather(batch []*recordReq) []*recordReq {
	for len(batch) < s.opts.MaxBatch {
		select {
		case r := <-s.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// commit stores batch in one transaction, hands the committed events to
// subscribers and then answers every Record waiting on the batch.
func (s *Store) commit(batch []*recordReq) {
	// Unwritable files fail the batch before SQLite touches them: the
	// writer's connection asks checkFiles before it prepares a statement
	// or begins the transaction, and again before the commit (fault.go).
	err := s.insert(batch)
	if err != nil && diskFull(err) {
		// Give SQLite the reserve and try once more: what was asked to be
		// recorded is recorded; new operations are refused until there is
		// room again (Writable).
		s.markFull()
		err = s.insert(batch)
	}
	s.writeFailed(err)
	if err == nil {
		s.publish(batch)
		s.kickCheckpoint(len(batch))
	} else {
		err = fmt.Errorf("record audit event: %w", err)
	}
	for _, r := range batch {
		r.done <- result{id: r.ev.ID, err: err}
	}
}

func (s *Store) insert(batch []*recordReq) (err error) {
	inserts := s.inserts[:0]
	for _, r := range batch {
		if !r.update {
			inserts = append(inserts, r)
		}
	}
	s.inserts = inserts
	defer clear(inserts) // the buffer outlives the batch: hold none of it
	// The statements this batch needs, before the transaction takes the
	// writer's only connection (preparing one needs it too).
	for left := len(inserts); left > 0; {
		n := s.rows(left)
		if _, err := s.insertStmt(n); err != nil {
			return err
		}
		left -= n
	}
	tx, err := s.wdb.Begin()
	if err != nil {
		return err
	}
	lastID := s.lastID
	defer func() {
		if err != nil {
			tx.Rollback()
			s.lastID = lastID // the ids given to this batch were not used
			for _, r := range batch {
				if !r.update {
					r.ev.ID = 0
				}
			}
		}
	}()
	for _, r := range batch {
		if r.update {
			e := &r.ev
			if _, err := tx.Stmt(s.upd[0]).Exec(string(e.DecidedBy), e.Detail, e.Bytes, e.DurationMs, e.Error, e.Answer, e.AnsweredBy, e.Rule, e.ID); err != nil {
				return err
			}
			if _, err := tx.Stmt(s.upd[1]).Exec(string(e.Decision), e.ID); err != nil {
				return err
			}
			if _, err := tx.Stmt(s.upd[2]).Exec(changesJSON(e.Changes), e.ID); err != nil {
				return err
			}
		}
	}
	for rest := inserts; len(rest) > 0; {
		n := s.rows(len(rest))
		args := s.args[:0]
		for _, r := range rest[:n] {
			// Ids in commit order: this goroutine is the only writer,
			// and lastID is the largest id ever given (migration 011).
			s.lastID++
			r.ev.ID = s.lastID
			e := &r.ev
			args = append(args, e.ID, e.Time.UnixNano(), e.Client, e.User, e.Op, e.Target,
				string(e.Decision), string(e.DecidedBy), e.Detail, e.Bytes, e.DurationMs, e.Error, changesJSON(e.Changes), e.Answer, e.AnsweredBy, e.Rule)
		}
		s.args = args
		_, err := tx.Stmt(s.ins[n-1]).Exec(args...)
		clear(args) // as inserts
		if err != nil {
			return err
		}
		rest = rest[n:]
	}
	return tx.Commit()
}

// rowsPerStatement is how many of left events to insert with the next
// statement: all of them, up to insertRows. A transaction's cost grows
// with its statements far more than with its rows.
func rowsPerStatement(left int) int { return min(left, insertRows) }

// insertStmt returns the INSERT of n rows (1 ≤ n ≤ insertRows), prepared
// on the writer's connection the first time it is needed: never inside a
// transaction, which holds that connection. Writer only.
func (s *Store) insertStmt(n int) (*sql.Stmt, error) {
	if st := s.ins[n-1]; st != nil {
		return st, nil
	}
	st, err := s.wdb.Prepare(insertSQL + strings.Repeat(insertValues, n-1))
	if err != nil {
		return nil, fmt.Errorf("prepare insert: %w", err)
	}
	s.ins[n-1] = st
	return st, nil
}

// deleteChunk deletes up to pruneChunk events older than before, and
// keeps the largest id given in audit_ids in the same transaction: the
// newest events may be among those deleted, and ids are never reused.
// prepareUpdates prepares Complete's statements (updateSQL), at Open: on
// the writer's connection, outside any transaction.
func (s *Store) prepareUpdates() error {
	for i, q := range []string{updateSQL, updateDecisionSQL, updateChangesSQL} {
		st, err := s.wdb.Prepare(q)
		if err != nil {
			return fmt.Errorf("prepare update: %w", err)
		}
		s.upd[i] = st
	}
	return nil
}

func (s *Store) deleteChunk(before int64) result {
	n, err := s.deleteChunkTx(before)
	if err != nil {
		return result{err: fmt.Errorf("prune audit events: %w", err)}
	}
	return result{id: n}
}

func (s *Store) deleteChunkTx(before int64) (n int64, err error) {
	tx, err := s.wdb.Begin()
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	res, err := tx.Exec(`DELETE FROM audit_events WHERE id IN
		(SELECT id FROM audit_events WHERE time_ns < ? LIMIT ?)`, before, pruneChunk)
	if err != nil {
		return 0, err
	}
	if n, err = res.RowsAffected(); err != nil || n == 0 {
		return 0, errors.Join(err, tx.Commit())
	}
	if _, err := tx.Exec(`UPDATE audit_ids SET last = max(last, ?)`, s.lastID); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// loadLastID reads the largest id ever given: the table's or, once Prune
// has deleted the newest events, the one audit_ids kept.
func (s *Store) loadLastID() error {
	err := s.wdb.QueryRow(`SELECT max(coalesce((SELECT max(id) FROM audit_events), 0),
		coalesce((SELECT last FROM audit_ids), 0))`).Scan(&s.lastID)
	if err != nil {
		return fmt.Errorf("read the last audit id: %w", err)
	}
	return nil
}

// clampNanos converts t to Unix nanoseconds, saturating outside the range
// an int64 can hold, so filters far in the past or future still work.
func clampNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}
