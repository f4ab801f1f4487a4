// Package audit defines the audit event, the query filter and the
// interfaces through which core records and reads them. Storage lives in
// store/; core only depends on these interfaces.
//
// Guarantee: an operation performed through core records exactly one Event,
// and Sink.Record returns only after that event is durable (committed), so a
// transport that answers after Record never answers an unaudited call.
// Every operation Corral records is named in Operations, with the words
// the owner's surfaces show for it (ops_test.go reads the sources to hold
// that).
package audit

import (
	"context"
	"time"
)

// Decision is the outcome recorded for an event.
type Decision string

const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Error Decision = "error"
)

// DecidedBy names what made the decision.
type DecidedBy string

const (
	ByScope   DecidedBy = "scope"
	ByRoot    DecidedBy = "root"
	ByRule    DecidedBy = "rule"
	ByOwner   DecidedBy = "owner"
	ByTimeout DecidedBy = "timeout"
	ByStrict  DecidedBy = "strict"
	ByPaused  DecidedBy = "paused"
	ByLevel   DecidedBy = "level" // the agent's trust level (Read-only) refused it
)

// Event is one audited operation (docs/protocol.md section 6, `event`).
type Event struct {
	ID         int64
	Time       time.Time
	Client     string
	User       string // the scope the request acted in
	Op         string
	Target     string
	Decision   Decision
	DecidedBy  DecidedBy
	Detail     string
	Bytes      int64
	DurationMs int64
	Error      string
	// Answer and AnsweredBy are set when the owner answered a question
	// for this event: the answer (policy's "allow_once", "deny_always", …)
	// and which of the owner's surfaces gave it: "dialog" (the desktop
	// dialog), "cli" (the owner's key: corral approve), "dashboard:<browser>"
	// (a dashboard tab on this computer) or "device:<name>" (a paired phone).
	Answer     string
	AnsweredBy string
	// Rule is the id of the rule that decided (DecidedBy rule), or that
	// the owner's answer made ("always allow").
	Rule string
	// Changes lists the files the operation created, modified, deleted or
	// moved, with the versions Corral kept of what was there before
	// (core/versions). Empty for operations that changed nothing.
	Changes []Change
}

// ChangeKind says what an operation did to one path.
type ChangeKind string

const (
	Created  ChangeKind = "created"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
	Moved    ChangeKind = "moved"
)

// Change is what one operation did to one file. Paths are agent-visible
// paths in the event's scope (User). Version and After are SHA-256 hex
// digests of the content before and after the change: Version names the
// content kept in the version store ("" when nothing was there, or when
// NotKept says why it was not kept); After is what the change left there
// ("" for a deletion), so an undo can tell whether the file changed again.
type Change struct {
	Path       string
	Kind       ChangeKind
	From       string // a move's old path
	SizeBefore int64
	SizeAfter  int64
	Version    string
	After      string
	Mode       uint32 // permission bits before (after, for a created file)
	Link       string // a symlink's target, for a link that was changed
	NotKept    string // why the content before was not kept ("too_large", "not_regular", …)
	Dir        bool   // a folder (made by folder.create, or removed by undoing that)
}

// Filter selects events for Query and Stats. Zero fields do not filter.
type Filter struct {
	Since    time.Time // inclusive
	Until    time.Time // exclusive
	Client   string
	Agent    string // part of Client, ASCII case ignored
	User     string
	Op       string
	Ops      []string // any of these operations; nil: any
	Decision Decision
	Text     string // literal part of Target or Detail, ASCII case ignored
	ID       int64  // only the event with this id; 0: any
	Changed  bool   // only events that changed files (Event.Changes not empty)
	HideOwn  bool   // leave out the owner's own housekeeping (see Housekeeping)
	Path     string // only events whose changes name this path (as Path or From); implies Changed
	Asked    bool   // only events the owner was asked about (answered, or unanswered until the question expired)
	Cursor   string // opaque, from Page.NextCursor
	Limit    int    // clamped to 1..1000; 0 means 100
}

// OwnerClients are the Client names of the owner's own surfaces (the
// owner's token and the dashboard), and DevicePrefix starts those of paired
// devices.
var OwnerClients = []string{"owner", "browser"}

const DevicePrefix = "device:"

// Housekeeping are the operations that only look or sign in: done by one of
// the owner's own surfaces they say nothing about what happened to the
// files, and Filter.HideOwn leaves them out.
var Housekeeping = []string{"file.read", "file.stat", "folder.list", "file.find", "file.grep",
	"session.login", "pairing.start", "files.out"}

// Page is one page of events, newest first.
type Page struct {
	Events     []Event
	NextCursor string // "" when there are no more
}

// Bucket counts events of one time bucket by decision.
type Bucket struct {
	Start time.Time
	Allow int64
	Deny  int64
	Error int64
}

// Sink records events. Record blocks until the event is committed and
// returns its id; it fails only if the event could not be stored.
type Sink interface {
	Record(ctx context.Context, e Event) (int64, error)
}

// Completer is implemented by sinks that can finish an event recorded
// earlier: a command's event is recorded before the command starts (so
// nothing runs unaudited) and completed, under the same id, when it ends.
// Complete blocks until the change is committed.
type Completer interface {
	Complete(ctx context.Context, e Event) error
}

// Health is implemented by sinks that know whether they can record now.
// Writable returns nil when they can, else an error whose message is a
// sentence for the owner (for example: the disk is full).
type Health interface {
	Writable() error
}

// Reader answers the owner's questions about the log.
type Reader interface {
	Query(ctx context.Context, f Filter) (Page, error)
	Stats(ctx context.Context, f Filter, bucket time.Duration) ([]Bucket, error)
}

// Subscribe is implemented by stores that can stream committed events.
// The returned channel receives every event committed after the call
// until cancel is called; a subscriber that falls behind loses events
// rather than slowing the writer (it gets a closed channel).
type Subscriber interface {
	Subscribe() (events <-chan Event, cancel func())
}

// Markers ending the Detail of an event recorded before its operation
// ended: a command that runs (Running), a change about to be made, with
// the changes it will make (Pending). Completing the event replaces its
// Detail, so an event whose Detail still ends with one of them belongs to
// an operation Corral never finished (it stopped or crashed meanwhile).
const (
	Running = "running"
	Pending = "pending"
)

// Unfinisher is implemented by stores that list the events whose
// operation began and never ended (their Detail ends with Running or
// Pending), newest first, at most max of them. Corral completes each one
// at start-up, before it serves (sandbox.Recover).
type Unfinisher interface {
	Unfinished(ctx context.Context, max int) ([]Event, error)
}
