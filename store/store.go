// Package store keeps Corral's data in one SQLite file (WAL mode) and
// implements core's storage interfaces. It holds:
//   - the audit log: events with their changes, answers and summaries
//     (audit.Sink, Completer, Reader, Subscriber, Health, Unfinisher and
//     Summarizer; writer.go, query.go, subscribe.go, summary.go,
//     unfinished.go, size.go);
//   - the owner's "always" rules (policy.RuleStore; rules.go);
//   - the agents and people the owner added at runtime, and agents'
//     paused state (agents.go);
//   - paired devices and browser sessions, by the SHA-256 of their tokens
//     (devices.go, sessions.go);
//   - the ledger of the links the sandbox hands out (links.LinkLedger;
//     links.go).
//
// Each came with a migration (migrations/, applied in order at Open).
// The go-sqlite3 driver needs cgo (sqlite_cgo.go; a build without it has
// no store, sqlite_nocgo.go).
//
// Guaranteed:
//   - Record returns only after the event's transaction has committed, with
//     the event's id: the commit is written to the -wal, so a crash or a
//     SIGKILL of Corral loses no event whose Record returned. Ids grow in
//     commit order and are never reused, even after Prune (the writer
//     gives them; audit_ids keeps the largest once Prune deleted it).
//   - Audit events are written by one goroutine, which commits whatever is
//     queued (up to Options.MaxBatch events) in one transaction; Prune runs
//     on the same goroutine in small chunks, between batches. Close commits
//     everything already queued before it returns; Record after Close
//     returns ErrClosed.
//   - Query pages are newest first by event time (ties by id, the later
//     recorded first), which need not be commit order, and use keyset
//     cursors on (time, id), so events recorded or pruned while a caller
//     pages never repeat or shift pages.
//   - A subscriber receives every event committed after Subscribe returned,
//     in commit order, or has its channel closed if it falls behind.
//   - Writable (audit.Health) answers a sentence, and no commit starts,
//     while the database, its -wal or its -shm cannot be written or after
//     a commit failed, until a probe (each second) finds them writable
//     and commits a test transaction (fault.go); likewise while the disk
//     is full, which a store opened on a disk with less room than its
//     reserve starts as (reserve.go).
//   - Every value reaches SQL as a parameter; a text filter matches a literal
//     substring (% _ ' \ are ordinary characters).
//
// Not guaranteed:
//   - Durability across power loss or an OS crash: synchronous=NORMAL in WAL
//     mode keeps committed events across a crash of Corral itself, but the
//     last transactions before a power cut may be lost.
//   - Speed of every query. Filters on client, user, op or decision and
//     time ranges use indexes that are in page order; a text filter walks
//     the time index, reading rows until it has a page, so a rare text on a
//     large log reads the whole table (through the index: about twice as
//     slow as reading it in id order). Stats reads every event it counts,
//     so its cost grows with the range.
//   - Ordering between several processes writing the same file; a Store
//     expects to be the only writer.
//   - Graceful failure if another program truncates the file: reads go
//     through a memory map, and a vanished page is a SIGBUS, not an error.
//   - Surviving a -shm made unwritable at the very moment SQLite writes
//     it: the files are checked before every statement, transaction and
//     commit (fault.go), but a write fault in that memory map between the
//     check and the write is a SIGBUS. Closing while the -shm is
//     unwritable is one too (the last connection checkpoints).
//   - Starting on a disk so full that SQLite cannot create its -shm when
//     no reserve is left from an earlier run (reserve.go): Open fails.
//
// Size: about 2,800 lines of non-test code, above the house's 2,500. It
// stays one package because every table shares one SQLite file, one
// writer goroutine (the audit log's batches and Prune) and one fault
// check (fault.go) that must see every statement: a table in a package of
// its own would need its own connection or an exported way into the
// writer. Each table is a file of its own (see the list above).
package store

import (
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"corral/core/audit"
	"corral/core/killpoint"

	"github.com/mattn/go-sqlite3"
)

var (
	_ audit.Completer  = (*Store)(nil)
	_ audit.Health     = (*Store)(nil)
	_ audit.Sink       = (*Store)(nil)
	_ audit.Reader     = (*Store)(nil)
	_ audit.Subscriber = (*Store)(nil)
)

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("store is closed")

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// Logger receives what no caller can be told: a dropped subscriber, a
	// failed background checkpoint or optimisation. Nil discards them.
	Logger *slog.Logger
	// Clock stamps events recorded with a zero Time. Nil means time.Now.
	Clock func() time.Time
	// MaxBatch caps the events committed in one transaction. 0 means 2048.
	MaxBatch int
	// QueueSize is how many events may wait for the writer before Record
	// blocks. 0 means 4096.
	QueueSize int
	// SubscriberBuffer is each subscriber's channel capacity; a subscriber
	// whose buffer is full is dropped. 0 means 1024.
	SubscriberBuffer int
	// BusyTimeout is how long SQLite waits for a lock held by another
	// connection. 0 means 5s.
	BusyTimeout time.Duration
	// Readers caps the connections used by Query and Stats. 0 means 4.
	Readers int
	// MaxWALPages is the WAL size (in 4 KiB pages) past which the
	// checkpointer briefly holds writers to start the log over. 0 means
	// 8192 (32 MiB).
	MaxWALPages int
	// Reserve is the room, in bytes, kept beside the database for a full
	// disk (reserve.go). 0 means DefaultReserve; negative, none.
	Reserve int64
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 2048
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.SubscriberBuffer <= 0 {
		o.SubscriberBuffer = 1024
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.MaxWALPages <= 0 {
		o.MaxWALPages = 8192
	}
	if o.Reserve == 0 {
		o.Reserve = DefaultReserve
	}
	return o
}

// Store is an open database. Its methods are safe for concurrent use.
type Store struct {
	opts Options
	wdb  *sql.DB // one connection: the writer goroutine's, lent to other writes between batches
	rdb  *sql.DB // query_only connections for reads
	// Used only by the writer goroutine: the INSERT of n events at
	// ins[n-1] (insertStmt), buffers for a batch's inserts and their
	// arguments, and how many rows the next statement stores of those
	// left (rowsPerStatement; a benchmark sets the old way beside it).
	ins     [insertRows]*sql.Stmt
	upd     [3]*sql.Stmt // Complete's statements (updateSQL)
	lastID  int64        // the largest event id given so far (migration 011)
	inserts []*recordReq
	args    []any
	rows    func(left int) int

	queue   chan *recordReq
	prunes  chan *pruneReq
	quit    chan struct{} // closed by Close: stop taking work
	stopped chan struct{} // closed by the writer when it has flushed and exited

	uncheckpointed int           // events committed since the last kick; writer only
	ckptKick       chan struct{} // cap 1: a checkpoint is due
	ckptDone       chan struct{} // closed when the checkpointer has exited

	closeOnce sync.Once
	closeErr  error

	subMu      sync.Mutex
	subs       map[*subscriber]struct{}
	subsClosed bool

	res reserve // room kept for a full disk (reserve.go)
	flt fault   // files or writes that fail for another reason (fault.go)
}

// Open opens or creates the database at path, applies any migrations it
// lacks and starts the writer. The caller must Close the Store.
func Open(path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{
		opts:     opts,
		queue:    make(chan *recordReq, opts.QueueSize),
		prunes:   make(chan *pruneReq),
		quit:     make(chan struct{}),
		stopped:  make(chan struct{}),
		ckptKick: make(chan struct{}, 1),
		ckptDone: make(chan struct{}),
		subs:     make(map[*subscriber]struct{}),
		rows:     rowsPerStatement,
	}
	s.flt.init(abs)
	s.startReserve(abs)
	if err := s.open(abs); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.openReserve()
	go s.run()
	go s.checkpointer()
	return s, nil
}

func (s *Store) open(path string) error {
	busy := strconv.FormatInt(s.opts.BusyTimeout.Milliseconds(), 10)
	s.wdb = openDB(path, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_busy_timeout": {busy},
		"_foreign_keys": {"1"},
		"_txlock":       {"immediate"},
		"_cache_size":   {"-16384"}, // KiB
	}, dbSetup{
		sql:   mmapPragma + "PRAGMA wal_autocheckpoint = 0;",                      // see checkpoint.go
		hook:  func(c *sqlite3.SQLiteConn) { c.RegisterCommitHook(s.commitHook) }, // see fault.go
		guard: s.checkFiles,
	})
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := migrate(s.wdb); err != nil {
		return err
	}
	if err := s.loadLastID(); err != nil {
		return err
	}
	// Refresh planner statistics when they are missing or stale; cheap
	// thanks to analysis_limit. Not worth refusing to start for: on a
	// full disk it fails, and the store starts full (reserve.go).
	if _, err := s.wdb.Exec("PRAGMA analysis_limit = 1000; PRAGMA optimize = 0x10002"); err != nil {
		s.opts.Logger.Warn("audit store: optimize at start", "err", err)
	}
	// The one-event INSERT now: a statement that cannot be prepared
	// fails Open rather than the first Record.
	if _, err := s.insertStmt(1); err != nil {
		return err
	}
	if err := s.prepareUpdates(); err != nil {
		return err
	}

	s.rdb = openDB(path, url.Values{
		"_busy_timeout": {busy},
		"_foreign_keys": {"1"},
		"_query_only":   {"1"},
		"_cache_size":   {"-16384"},
	}, dbSetup{sql: mmapPragma, guard: s.readable})
	s.rdb.SetMaxOpenConns(s.opts.Readers)
	s.rdb.SetMaxIdleConns(s.opts.Readers)
	return s.rdb.Ping()
}

// mmapPragma maps up to 1 GiB of the file into memory: reads then cost no
// system call per page, which makes scans several times faster. It is
// address space, not memory use.
const mmapPragma = "PRAGMA mmap_size = 1073741824;"

// dbSetup is what openDB does with each new connection: run sql, for
// what parameters cannot set, and call hook. A guard that is not nil is
// asked before each statement or transaction the connection starts, and
// its error is returned instead (fault.go).
type dbSetup struct {
	sql   string
	hook  func(*sqlite3.SQLiteConn)
	guard func() error
}

// dsn builds a go-sqlite3 URI for path; escaping the path keeps '?', '#'
// and '%' in file names from being read as URI syntax.
func dsn(path string, params url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// Close stops taking new work, commits every event already queued, closes
// subscriber channels and the database. Calling it again returns the first
// call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		<-s.stopped
		<-s.ckptDone
		s.closeSubscribers()
		if s.problem() != nil || s.flt.filesWritable() != nil {
			s.opts.Logger.Warn("audit store: closing while the audit log cannot be written", "err", s.problem())
		} else if _, err := s.wdb.Exec("PRAGMA optimize"); err != nil {
			s.opts.Logger.Warn("audit store: optimize at close", "err", err)
		}
		if err := s.closeDBs(); err != nil {
			s.closeErr = fmt.Errorf("close store: %w", err)
		}
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var errList []error
	for _, st := range append(s.ins[:], s.upd[:]...) {
		if st != nil {
			errList = append(errList, st.Close())
		}
	}
	if s.rdb != nil {
		errList = append(errList, s.rdb.Close())
	}
	if s.wdb != nil {
		errList = append(errList, s.wdb.Close())
	}
	return errors.Join(errList...)
}

// closed reports whether Close has begun.
func (s *Store) closed() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order. Their file names
// are NNN_name.sql, numbered from 001 without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for i, name := range names { // fs.Glob returns names sorted
		base := filepath.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want number %03d", base, i+1)
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(body)})
	}
	return ms, nil
}

// migrate applies, each in its own transaction, the migrations newer than
// the database's user_version, and refuses a database from a newer Corral.
func migrate(db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := apply(db, m, len(ms)); err != nil {
			return err
		}
	}
	return nil
}

// migrationError is m's failure; on a full disk, a sentence saying so.
func migrationError(m migration, err error) error {
	if diskFull(err) {
		return fmt.Errorf("Corral cannot upgrade its database (migration %s): the disk holding it is full. Free some space there and start Corral again; the database is as it was: %w", m.name, err)
	}
	return fmt.Errorf("migration %s: %w", m.name, err)
}

func apply(db *sql.DB, m migration, latest int) (err error) {
	tx, err := db.Begin() // BEGIN IMMEDIATE (_txlock): concurrent openers wait here
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var have int
	if err := tx.QueryRow("PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if have > latest {
		return fmt.Errorf("database schema version %d is newer than this Corral's %d", have, latest)
	}
	if have >= m.version {
		return tx.Rollback()
	}
	killpoint.Here("migrate.begin")
	if _, err := tx.Exec(m.sql); err != nil {
		return migrationError(m, err)
	}
	// PRAGMA takes no parameters; m.version is our own integer.
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	killpoint.Here("migrate.commit")
	if err := tx.Commit(); err != nil {
		return migrationError(m, err)
	}
	killpoint.Here("migrate.done")
	return nil
}
