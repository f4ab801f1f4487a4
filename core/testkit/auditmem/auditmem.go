// Package auditmem is an audit log in memory, for tests of the parts
// that record events: Log takes events (audit.Sink) and Journal also
// completes them and lists the unfinished ones (audit.Completer,
// audit.Unfinisher), as the SQLite store does. Either can be told to
// fail, as a full disk would. It is for tests only: nothing is kept, and
// store/ tests the real log.
//
// A Log is not a Completer, on purpose: parts that treat a sink which
// cannot complete events differently are tested with a Log.
package auditmem

import (
	"context"
	"strings"
	"sync"

	"corral/core/audit"
)

// Log is an audit.Sink in memory; its zero value is an empty log. Event
// ids are 1, 2, 3… in the order of Record.
type Log struct {
	mu     sync.Mutex
	events []audit.Event
	fail   error
}

// Record appends e and returns its id, or the error Fail set.
func (l *Log) Record(_ context.Context, e audit.Event) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return 0, l.fail
	}
	l.events = append(l.events, e)
	return int64(len(l.events)), nil
}

// Fail makes Record (and a Journal's Complete) return err from now on;
// nil makes them work again.
func (l *Log) Fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

// Events returns a copy of the events recorded so far, oldest first.
func (l *Log) Events() []audit.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]audit.Event(nil), l.events...)
}

// Len is the number of events recorded so far.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Last returns the newest event, or a zero Event when there is none.
func (l *Log) Last() audit.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) == 0 {
		return audit.Event{}
	}
	return l.events[len(l.events)-1]
}

// Ops returns the Op of each event, oldest first.
func (l *Log) Ops() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.events))
	for _, e := range l.events {
		out = append(out, e.Op)
	}
	return out
}

// Journal is a Log that also completes events and lists the unfinished
// ones, as store does; its zero value is an empty journal.
type Journal struct{ Log }

var (
	_ audit.Sink       = (*Log)(nil)
	_ audit.Completer  = (*Journal)(nil)
	_ audit.Unfinisher = (*Journal)(nil)
)

// Complete replaces the event with e's id by e, or returns the error
// Fail set.
func (j *Journal) Complete(_ context.Context, e audit.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	j.events[e.ID-1] = e
	return nil
}

// Unfinished returns up to max events whose Detail still ends with
// audit.Running or audit.Pending, newest first, with their ids.
func (j *Journal) Unfinished(_ context.Context, max int) ([]audit.Event, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []audit.Event
	for i := len(j.events) - 1; i >= 0 && len(out) < max; i-- {
		e := j.events[i]
		if strings.HasSuffix(e.Detail, audit.Running) || strings.HasSuffix(e.Detail, audit.Pending) {
			e.ID = int64(i + 1)
			out = append(out, e)
		}
	}
	return out, nil
}
