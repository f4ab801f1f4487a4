package wire

import (
	"time"

	"corral/core/audit"
)

// Event is audit.Event on the wire.
type Event struct {
	ID         int64           `json:"id"`
	Time       time.Time       `json:"time"`
	Client     string          `json:"client"`
	User       string          `json:"user"` // the scope the request acted in
	Op         string          `json:"op"`
	Target     string          `json:"target"`
	Decision   audit.Decision  `json:"decision"`
	DecidedBy  audit.DecidedBy `json:"decided_by"`
	Detail     string          `json:"detail"`
	Bytes      int64           `json:"bytes"`
	DurationMs int64           `json:"duration_ms"`
	Error      string          `json:"error"`
	// Answer and AnsweredBy are set when the owner answered a question
	// for this event: the answer (policy's "allow_once", "deny_always", …)
	// and which of the owner's surfaces gave it: "dialog" (the desktop
	// dialog), "cli" (the owner's key: corral approve), "dashboard:<browser>"
	// (a dashboard tab on this computer) or "device:<name>" (a paired phone).
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
	// Rule is the id of the rule that decided (DecidedBy rule), or that
	// the owner's answer made ("always allow").
	Rule string `json:"rule,omitempty"`
	// Changes lists the files the operation created, modified, deleted or
	// moved, with the versions Corral kept of what was there before
	// (core/versions). Empty for operations that changed nothing.
	Changes []Change `json:"changes,omitempty"`
}

// Change is audit.Change on the wire.
type Change struct {
	Path       string           `json:"path"`
	Kind       audit.ChangeKind `json:"kind"`
	From       string           `json:"from,omitempty"` // a move's old path
	SizeBefore int64            `json:"size_before"`
	SizeAfter  int64            `json:"size_after"`
	Version    string           `json:"version,omitempty"`
	After      string           `json:"after,omitempty"`
	Mode       uint32           `json:"mode,omitempty"`     // permission bits before (after, for a created file)
	Link       string           `json:"link,omitempty"`     // a symlink's target, for a link that was changed
	NotKept    string           `json:"not_kept,omitempty"` // why the content before was not kept ("too_large", "not_regular", …)
	Dir        bool             `json:"dir,omitempty"`      // a folder (made by folder.create, or removed by undoing that)
}

// Page is audit.Page on the wire.
type Page struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"next_cursor"` // "" when there are no more
}

// Bucket is audit.Bucket on the wire.
type Bucket struct {
	Start time.Time `json:"start"`
	Allow int64     `json:"allow"`
	Deny  int64     `json:"deny"`
	Error int64     `json:"error"`
}

// AuditArgs are audit.query's and audit.stats' params (the owner's
// filter; bucket is audit.stats' only): declared here once for the
// server, which checks them, and `corral audit`, which sends them.
type AuditArgs struct {
	Since    string   `json:"since,omitempty"` // RFC 3339
	Until    string   `json:"until,omitempty"`
	Client   string   `json:"client,omitempty"`
	Agent    string   `json:"agent,omitempty"`
	User     string   `json:"user,omitempty"`
	Op       string   `json:"op,omitempty"`
	Ops      []string `json:"ops,omitempty"`
	Changed  bool     `json:"changed,omitempty"`
	Asked    bool     `json:"asked,omitempty"`
	HideOwn  bool     `json:"hide_own,omitempty"`
	Decision string   `json:"decision,omitempty"`
	Text     string   `json:"text,omitempty"`
	ID       int64    `json:"id,omitempty"`
	Cursor   string   `json:"cursor,omitempty"`
	Limit    int      `json:"limit,omitempty"`
	Bucket   string   `json:"bucket,omitempty"` // audit.stats: "hour" (default) or "day"
}

// AuditEvent is audit.event's params: one committed event, for
// audit.subscribe's subscribers.
type AuditEvent struct {
	Event Event `json:"event"`
}
