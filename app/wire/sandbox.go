package wire

import (
	"corral/core/audit"
	"corral/core/errs"
	"time"
)

// Context is sandbox.Context on the wire.
type Context struct {
	SessionID        string `json:"session_id,omitempty"`
	UserID           string `json:"user_id,omitempty"`
	AppID            string `json:"app_id,omitempty"`
	ChannelName      string `json:"channel_name,omitempty"`
	ConversationType string `json:"conversation_type,omitempty"`
}

// ReadArgs is sandbox.ReadArgs on the wire.
type ReadArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required"`
	Offset  int      `json:"offset"`
	Limit   int      `json:"limit"`
	// Encoding "base64" returns the file's bytes, whatever they are:
	// Offset is then a byte offset (0-based) and Limit a number of bytes
	// (at most fsbox.MaxBase64Bytes).
	Encoding string `json:"encoding"`
}

// WriteArgs is sandbox.WriteArgs on the wire.
type WriteArgs struct {
	Context  *Context `json:"context"`
	Reason   string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path     string   `json:"path" rpc:"required"`
	Content  string   `json:"content" rpc:"required"`
	Append   bool     `json:"append"`
	Encoding string   `json:"encoding"`
}

// WriteResult is sandbox.WriteResult on the wire.
type WriteResult struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// EditArgs is sandbox.EditArgs on the wire.
type EditArgs struct {
	Context    *Context      `json:"context"`
	Reason     string        `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path       string        `json:"path" rpc:"required"`
	OldText    *string       `json:"old_text"`
	NewText    *string       `json:"new_text"`
	ReplaceAll bool          `json:"replace_all"`
	Edits      []Replacement `json:"edits"`
	DryRun     bool          `json:"dry_run"`
}

// EditResult is sandbox.EditResult on the wire.
type EditResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	// Diff is the change as a unified diff (cut at 64 KiB, DiffTruncated
	// then set).
	Diff          string `json:"diff"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
	DryRun        bool   `json:"dry_run,omitempty"`
}

// DeleteArgs is sandbox.DeleteArgs on the wire.
type DeleteArgs struct {
	Context   *Context `json:"context"`
	Reason    string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path      string   `json:"path" rpc:"required"`
	Recursive bool     `json:"recursive"`
}

// PathResult is sandbox.PathResult on the wire.
type PathResult struct {
	Path string `json:"path"`
}

// MoveArgs is sandbox.MoveArgs on the wire.
type MoveArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	From    string   `json:"from" rpc:"required"`
	To      string   `json:"to" rpc:"required"`
}

// MoveResult is sandbox.MoveResult on the wire.
type MoveResult struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// FolderArgs is sandbox.FolderArgs on the wire.
type FolderArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required"`
}

// FolderResult is sandbox.FolderResult on the wire.
type FolderResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// StatArgs is sandbox.StatArgs on the wire.
type StatArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required"`
}

// ListArgs is sandbox.ListArgs on the wire.
type ListArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path"`
	Depth   int      `json:"depth"`
}

// ListResult is sandbox.ListResult on the wire.
type ListResult struct {
	Path      string `json:"path"`
	Entries   []Info `json:"entries"`
	Truncated bool   `json:"truncated"`
}

// FindArgs is sandbox.FindArgs on the wire.
type FindArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Pattern string   `json:"pattern" rpc:"required"`
	Path    string   `json:"path"`
}

// FindResult is sandbox.FindResult on the wire.
type FindResult struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
}

// GrepArgs is sandbox.GrepArgs on the wire.
type GrepArgs struct {
	Context    *Context `json:"context"`
	Reason     string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Pattern    string   `json:"pattern" rpc:"required"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	MaxMatches int      `json:"max_matches"`
}

// GrepResult is sandbox.GrepResult on the wire.
type GrepResult struct {
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated"`
}

// PatchArgs is sandbox.PatchArgs on the wire.
type PatchArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Patch   string   `json:"patch" rpc:"required"`
	DryRun  bool     `json:"dry_run"`
}

// PatchFile is sandbox.PatchFile on the wire.
type PatchFile struct {
	Path    string `json:"path"` // agent-visible; for a move, the new path
	Action  string `json:"action"`
	From    string `json:"from,omitempty"` // a move's old path
	Hunks   int    `json:"hunks"`
	Offsets []int  `json:"offsets,omitempty"` // per hunk, lines away from the stated position; only when one is not 0
}

// PatchResult is sandbox.PatchResult on the wire.
type PatchResult struct {
	Files  []PatchFile `json:"files"`
	DryRun bool        `json:"dry_run,omitempty"`
}

// RunArgs is commands.RunArgs on the wire.
type RunArgs struct {
	Context    *Context `json:"context"`
	Command    string   `json:"command" rpc:"required"`
	WorkingDir string   `json:"working_dir"`
	Network    bool     `json:"network"`
	// AllowedDomains and PackageManagers give the command network to
	// those domains only, those no rule decides asked of the owner in one
	// question before the command starts.
	AllowedDomains  []string          `json:"allowed_domains"`
	PackageManagers []string          `json:"package_managers"`
	TimeoutMs       int64             `json:"timeout_ms"`
	Env             map[string]string `json:"env"`
	Stdin           string            `json:"stdin"`
	Stream          bool              `json:"stream"`
	Reason          string            `json:"reason"`
}

// RunResult is commands.RunResult on the wire.
type RunResult struct {
	ExitCode   int     `json:"exitCode"`
	Signal     *string `json:"signal"`
	Stdout     string  `json:"stdout"`
	Stderr     string  `json:"stderr"`
	Truncated  bool    `json:"truncated"`
	TimedOut   bool    `json:"timedOut"`
	Cancelled  bool    `json:"cancelled,omitempty"`
	DurationMs int64   `json:"durationMs"`
	// Network says what the command did on the network, and which
	// connections Corral refused and why; absent without network.
	Network *Summary `json:"network,omitempty"`
	// Changes lists the files the command created, modified or deleted in
	// its writable folders (at most maxReportedChanges, then
	// ChangesTruncated); null when Corral could not record them.
	Changes          []FileChange `json:"changes"`
	ChangesTruncated bool         `json:"changes_truncated,omitempty"`
	// NotApplied, when set, says that some of the command's changes were
	// not applied to the folders, and why.
	NotApplied *NotApplied `json:"not_applied,omitempty"`
}

// NotApplied is commands.NotApplied on the wire.
type NotApplied struct {
	Kind    errs.Kind `json:"kind"`
	Message string    `json:"message"`
	Paths   []string  `json:"paths"`
	Count   int       `json:"count"`
}

// Running is commands.Running on the wire.
type Running struct {
	RequestID string    `json:"request_id"`
	Client    string    `json:"client"`
	Scope     string    `json:"scope"`
	Command   string    `json:"command"`
	Started   time.Time `json:"started"`
}

// FileChange is commands.FileChange on the wire.
type FileChange struct {
	Path string           `json:"path"`
	Kind audit.ChangeKind `json:"kind"`
}

// ResultArgs is links.ResultArgs on the wire.
type ResultArgs struct {
	Context *Context `json:"context"`
	Title   string   `json:"title" rpc:"required"`
	Content string   `json:"content" rpc:"required"`
	Format  string   `json:"format"`
}

// UndoArgs is undo.UndoArgs on the wire.
type UndoArgs struct {
	EventID int64 `json:"event_id" rpc:"required"`
	// SkipConflicts applies what does not conflict and leaves the
	// conflicting files as they are; without it a conflict stops the
	// whole undo.
	SkipConflicts bool `json:"skip_conflicts"`
	// Folder limits the undo to the changes at that path or under it.
	Folder string `json:"folder,omitempty"`
}

// UndoFile is undo.UndoFile on the wire.
type UndoFile struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "restore", "remove", "move_back", "none"
	From   string `json:"from,omitempty"`
	Kind   string `json:"kind"` // the change being undone
	// Conflict says why the file cannot be put back ("" when it can).
	Conflict  string `json:"conflict,omitempty"`
	SizeNow   int64  `json:"size_now"`
	SizeAfter int64  `json:"size_after"` // after the undo
	Binary    bool   `json:"binary,omitempty"`
	Diff      string `json:"diff,omitempty"` // from now to after the undo, for text
	// Version names the kept content the change replaced (what
	// version.restore puts back at Path); "" for a created file or one
	// whose content was not kept.
	Version string `json:"version,omitempty"`
}

// UndoResult is undo.UndoResult on the wire.
type UndoResult struct {
	EventID   int64      `json:"event_id"`
	Op        string     `json:"op"`
	Client    string     `json:"client"`
	User      string     `json:"user,omitempty"` // the event's scope
	Time      time.Time  `json:"time,omitzero"`  // when the event happened
	Files     []UndoFile `json:"files"`
	Conflicts int        `json:"conflicts"`
	Applied   bool       `json:"applied"`
	// UndoEvent is the event that recorded the undo (undo it to redo).
	UndoEvent int64 `json:"undo_event,omitempty"`
	// Target is the event's target (a command's command line).
	Target string `json:"target,omitempty"`
	// Folders are the folders the event deleted that are gone now.
	Folders []UndoFolder `json:"folders,omitempty"`
}

// UndoFolder is undo.UndoFolder on the wire.
type UndoFolder struct {
	Path  string `json:"path"`
	Files int    `json:"files"`
}

// RestoreArgs is undo.RestoreArgs on the wire.
type RestoreArgs struct {
	Context *Context `json:"context"`
	Path    string   `json:"path" rpc:"required"`
	Version string   `json:"version" rpc:"required"`
}

// HistoryArgs is undo.HistoryArgs on the wire.
type HistoryArgs struct {
	Context *Context `json:"context"`
	Path    string   `json:"path" rpc:"required"`
	Limit   int      `json:"limit"`
}

// Version is undo.Version on the wire.
type Version struct {
	EventID int64     `json:"event_id"`
	Time    time.Time `json:"time"`
	Client  string    `json:"client"`
	Op      string    `json:"op"`
	Kind    string    `json:"kind"`
	Version string    `json:"version,omitempty"` // "" when nothing was there or it was not kept
	Size    int64     `json:"size"`
	Mode    uint32    `json:"mode,omitempty"`
	NotKept string    `json:"not_kept,omitempty"`
	Kept    bool      `json:"kept"` // the content is still in the store
}

// HistoryResult is undo.HistoryResult on the wire.
type HistoryResult struct {
	Path     string    `json:"path"`
	Versions []Version `json:"versions"`
}

// ChangesArgs is undo.ChangesArgs on the wire.
type ChangesArgs struct {
	EventID int64 `json:"event_id" rpc:"required"`
}

// ChangesResult is undo.ChangesResult on the wire.
type ChangesResult struct {
	Event   Event    `json:"event"`
	Changes []Change `json:"changes"`
}

// UndoClientArgs is undo.UndoClientArgs on the wire.
type UndoClientArgs struct {
	Client        string    `json:"client"` // "": every agent
	Since         time.Time `json:"since" rpc:"required"`
	Until         time.Time `json:"until"` // exclusive; zero: up to now
	DryRun        bool      `json:"dry_run"`
	SkipConflicts bool      `json:"skip_conflicts"`
}

// UndoClientResult is undo.UndoClientResult on the wire.
type UndoClientResult struct {
	Events    []UndoResult `json:"events"` // newest first, the order they are undone in
	Conflicts int          `json:"conflicts"`
	Applied   bool         `json:"applied"`
	DryRun    bool         `json:"dry_run,omitempty"`
}

// DocumentReadArgs is sandbox.DocumentReadArgs on the wire.
type DocumentReadArgs struct {
	Context *Context `json:"context"`
	Reason  string   `json:"reason"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required"`
	Offset  int      `json:"offset"`
	Limit   int      `json:"limit"`
}

// DocumentResult is sandbox.DocumentResult on the wire.
type DocumentResult struct {
	Type        string  `json:"type"` // "document"
	Path        string  `json:"path"`
	Format      string  `json:"format"`
	Content     string  `json:"content"`
	TotalLines  int     `json:"totalLines"`
	OutputLines int     `json:"outputLines"`
	Truncated   bool    `json:"truncated"`
	TruncatedBy *string `json:"truncatedBy"`
	Pages       int     `json:"pages,omitempty"`
}
