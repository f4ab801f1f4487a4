//go:build !cgo

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"syscall"
)

// Corral's SQLite (go-sqlite3) is C, built through cgo: a build without
// cgo has no audit log, and Open fails with this sentence.
var errNoCgo = errors.New("Corral was built without cgo, and its audit log (SQLite) needs it: build it with CGO_ENABLED=1 and a C compiler.")

func openDB(path string, params url.Values, su dbSetup) *sql.DB {
	return sql.OpenDB(noDriver{})
}

type noDriver struct{}

func (noDriver) Connect(context.Context) (driver.Conn, error) { return nil, errNoCgo }
func (noDriver) Driver() driver.Driver                        { return noDriver{} }
func (noDriver) Open(string) (driver.Conn, error)             { return nil, errNoCgo }

func isConstraint(err error) bool { return false }

func diskFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }
