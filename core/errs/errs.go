// Package errs defines the errors Corral answers with: a kind from
// docs/protocol.md section 7, a polite sentence for a person, and the
// agent-visible path it concerns.
//
// Every failure that reaches a transport is an *Error. Anything else that
// escapes (a bug, an unexpected system error) is reported as kind io with a
// generic sentence, so no host path or internal detail leaks to an agent.
package errs

import (
	"errors"
	"fmt"
)

// Kind is the machine-readable class of an error.
type Kind string

// The kinds of docs/protocol.md section 7, plus InvalidParams, which transports
// answer as JSON-RPC -32602.
const (
	Denied        Kind = "denied"
	Forbidden     Kind = "forbidden"
	NotFound      Kind = "not_found"
	InvalidPath   Kind = "invalid_path"
	Exists        Kind = "exists"
	Conflict      Kind = "conflict"
	TooLarge      Kind = "too_large"
	IsDirectory   Kind = "is_directory"
	NotDirectory  Kind = "not_directory"
	Binary        Kind = "binary"
	Timeout       Kind = "timeout"
	Unavailable   Kind = "unavailable"
	IO            Kind = "io"
	InvalidParams Kind = "invalid_params"
)

// Error is a failure with a kind and a sentence fit to show a person.
type Error struct {
	Kind Kind
	Msg  string // a polite sentence, ending in a full stop
	Path string // agent-visible path, if the error concerns one
	Err  error  // underlying cause, for logs only; never shown to agents
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error of kind k about path with a formatted message.
func New(k Kind, path, format string, args ...any) *Error {
	return &Error{Kind: k, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Wrap is New with an underlying cause kept for logs.
func Wrap(err error, k Kind, path, format string, args ...any) *Error {
	return &Error{Kind: k, Path: path, Msg: fmt.Sprintf(format, args...), Err: err}
}

// As returns err as an *Error. An error that is not one becomes kind io
// with a generic sentence, keeping the original as its cause.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: IO, Msg: "Something went wrong on the computer running Corral; the operation did not complete.", Err: err}
}

// KindOf returns the kind of err (io for foreign errors, "" for nil).
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	return As(err).Kind
}
