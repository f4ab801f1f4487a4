//go:build cgo

package store

// The go-sqlite3 driver glue, which needs cgo: openDB, its connector and
// guardedConn (fault.go says why), and the reading of SQLite error codes.
// sqlite_nocgo.go stands in for it in a build without cgo.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"syscall"

	"github.com/mattn/go-sqlite3"
)

// openDB returns a pool of connections to path with the given go-sqlite3
// parameters, each set up as su says.
func openDB(path string, params url.Values, su dbSetup) *sql.DB {
	drv := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if su.hook != nil {
			su.hook(c)
		}
		_, err := c.Exec(su.sql, nil)
		return err
	}}
	return sql.OpenDB(connector{dsn: dsn(path, params), drv: drv, guard: su.guard})
}

// connector lets openDB use its own driver value instead of registering
// one globally.
type connector struct {
	dsn   string
	drv   *sqlite3.SQLiteDriver
	guard func() error
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil || c.guard == nil {
		return conn, err
	}
	return guardedConn{conn.(*sqlite3.SQLiteConn), c.guard}, nil
}
func (c connector) Driver() driver.Driver { return c.drv }

// guardedConn asks guard before each statement or transaction it starts
// on the connection, so SQLite never begins one (a reader writes its mark
// into the -shm, a writer takes its lock there) in files the kernel would
// refuse. Statements prepared earlier run inside a transaction, which was
// asked.
type guardedConn struct {
	*sqlite3.SQLiteConn
	guard func() error
}

func (c guardedConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.guard(); err != nil {
		return nil, err
	}
	return c.SQLiteConn.ExecContext(ctx, q, args)
}

func (c guardedConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.guard(); err != nil {
		return nil, err
	}
	return c.SQLiteConn.QueryContext(ctx, q, args)
}

func (c guardedConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if err := c.guard(); err != nil {
		return nil, err
	}
	return c.SQLiteConn.PrepareContext(ctx, q)
}

func (c guardedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.guard(); err != nil {
		return nil, err
	}
	return c.SQLiteConn.BeginTx(ctx, opts)
}

// isConstraint reports whether err is a UNIQUE or PRIMARY KEY violation.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

// diskFull reports whether err means the disk (or the database's size
// limit) is full.
func diskFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.ExtendedCode == sqlite3.ErrIoErrWrite && errors.Is(se.SystemErrno, syscall.ENOSPC)) {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}
