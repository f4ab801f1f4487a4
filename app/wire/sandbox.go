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
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required" jsonschema:"the file to read"`
	Offset  int      `json:"offset,omitempty" jsonschema:"the first line to return"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many lines to return"`
	// Tail is an extension (docs/protocol.md): the last this many lines.
	Tail int `json:"tail,omitempty" jsonschema:"only the last this many lines (not with offset/limit)"`
	// Encoding "base64" returns the file's bytes, whatever they are:
	// Offset is then a byte offset (0-based) and Limit a number of bytes
	// (at most fsbox.MaxBase64Bytes).
	Encoding string `json:"encoding,omitempty" jsonschema:"text (UTF-8, or converted from a named 8-bit encoding) or base64 (4 MiB of bytes from byte_offset)"`
	// ByteOffset is an extension: with base64, Offset under MCP's name.
	ByteOffset int64 `json:"byte_offset,omitempty" jsonschema:"with base64: the first byte to return"`
}

// WriteArgs is sandbox.WriteArgs on the wire.
type WriteArgs struct {
	Context  *Context `json:"context,omitempty"`
	Reason   string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path     string   `json:"path" rpc:"required" jsonschema:"the file to write; parent folders are made"`
	Content  string   `json:"content" rpc:"required" jsonschema:"the text, or with encoding=base64 the bytes in base64"`
	Append   bool     `json:"append,omitempty" jsonschema:"append instead of replacing"`
	Encoding string   `json:"encoding,omitempty" jsonschema:"utf8 for text, base64 for binary content"`
}

// WriteResult is sandbox.WriteResult on the wire.
type WriteResult struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// EditArgs is sandbox.EditArgs on the wire.
type EditArgs struct {
	Context    *Context      `json:"context,omitempty"`
	Reason     string        `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path       string        `json:"path" rpc:"required" jsonschema:"the file to edit"`
	OldText    *string       `json:"old_text,omitempty" jsonschema:"the exact text to replace"`
	NewText    *string       `json:"new_text,omitempty" jsonschema:"the replacement text"`
	ReplaceAll bool          `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
	Edits      []Replacement `json:"edits,omitempty" jsonschema:"several edits in order, instead of old_text/new_text"`
	DryRun     bool          `json:"dry_run,omitempty" jsonschema:"only return the diff; change nothing"`
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
	Context   *Context `json:"context,omitempty"`
	Reason    string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path      string   `json:"path" rpc:"required" jsonschema:"the file or folder to delete"`
	Recursive bool     `json:"recursive,omitempty" jsonschema:"a folder with all it holds"`
}

// PathResult is sandbox.PathResult on the wire.
type PathResult struct {
	Path string `json:"path"`
}

// MoveArgs is sandbox.MoveArgs on the wire.
type MoveArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	From    string   `json:"from" rpc:"required" jsonschema:"the path to move"`
	To      string   `json:"to" rpc:"required" jsonschema:"the new path, which must not exist"`
}

// MoveResult is sandbox.MoveResult on the wire.
type MoveResult struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// FolderArgs is sandbox.FolderArgs on the wire.
type FolderArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required" jsonschema:"the folder to make"`
}

// FolderResult is sandbox.FolderResult on the wire.
type FolderResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// StatArgs is sandbox.StatArgs on the wire.
type StatArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required" jsonschema:"the file or folder"`
}

// ListArgs is sandbox.ListArgs on the wire.
type ListArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path,omitempty" jsonschema:"the folder to list; empty for yours"`
	Depth   int      `json:"depth,omitempty" jsonschema:"how many levels to list"`
}

// ListResult is sandbox.ListResult on the wire.
type ListResult struct {
	Path      string `json:"path"`
	Entries   []Info `json:"entries"`
	Truncated bool   `json:"truncated"`
}

// FindArgs is sandbox.FindArgs on the wire.
type FindArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Pattern string   `json:"pattern" rpc:"required" jsonschema:"a glob such as **/*.md"`
	Path    string   `json:"path,omitempty" jsonschema:"the folder to search; empty for yours"`
}

// FindResult is sandbox.FindResult on the wire.
type FindResult struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
}

// GrepArgs is sandbox.GrepArgs on the wire.
type GrepArgs struct {
	Context    *Context `json:"context,omitempty"`
	Reason     string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Pattern    string   `json:"pattern" rpc:"required" jsonschema:"a regular expression (RE2)"`
	Path       string   `json:"path,omitempty" jsonschema:"the folder or file to search; empty for yours"`
	Glob       string   `json:"glob,omitempty" jsonschema:"only files matching: *.go by name anywhere, src/**/*.go by path below path"`
	MaxMatches int      `json:"max_matches,omitempty" jsonschema:"at most this many matches"`
}

// GrepResult is sandbox.GrepResult on the wire.
type GrepResult struct {
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated"`
}

// PatchArgs is applypatch.PatchArgs on the wire.
type PatchArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Patch   string   `json:"patch" rpc:"required" jsonschema:"a unified diff or a Codex patch (*** Begin Patch …)"`
	DryRun  bool     `json:"dry_run,omitempty" jsonschema:"only check and report; write nothing"`
}

// PatchFile is applypatch.PatchFile on the wire.
type PatchFile struct {
	Path    string `json:"path"` // agent-visible; for a move, the new path
	Action  string `json:"action"`
	From    string `json:"from,omitempty"` // a move's old path
	Hunks   int    `json:"hunks"`
	Offsets []int  `json:"offsets,omitempty"` // per hunk, lines away from the stated position; only when one is not 0
}

// PatchResult is applypatch.PatchResult on the wire.
type PatchResult struct {
	Files  []PatchFile `json:"files"`
	DryRun bool        `json:"dry_run,omitempty"`
}

// RunArgs is commands.RunArgs on the wire.
type RunArgs struct {
	Context    *Context `json:"context,omitempty"`
	Command    string   `json:"command" rpc:"required" jsonschema:"run as /bin/sh -c COMMAND"`
	WorkingDir string   `json:"working_dir,omitempty" jsonschema:"a folder in $HOME, e.g. playground"`
	Network    bool     `json:"network,omitempty" jsonschema:"any public domain, asked every time"`
	// AllowedDomains and PackageManagers give the command network to
	// those domains only, those no rule decides asked of the owner in one
	// question before the command starts.
	AllowedDomains  []string          `json:"allowed_domains,omitempty" jsonschema:"domains it needs (api.example.com, *.example.com)"`
	PackageManagers []string          `json:"package_managers,omitempty" jsonschema:"package registries it needs"`
	TimeoutMs       int64             `json:"timeout_ms,omitempty" jsonschema:"kill it after this many milliseconds"`
	Env             map[string]string `json:"env,omitempty" jsonschema:"extra environment variables"`
	Stdin           string            `json:"stdin,omitempty" jsonschema:"text for its standard input"`
	// Stream sends the output as it comes (command.output); MCP's
	// run_command sets it when the client wants progress.
	Stream bool   `json:"stream,omitempty"`
	Reason string `json:"reason,omitempty"`
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
	Context *Context `json:"context,omitempty"`
	Title   string   `json:"title" rpc:"required" jsonschema:"the page's title"`
	Content string   `json:"content" rpc:"required" jsonschema:"the report, as format says"`
	Format  string   `json:"format,omitempty" jsonschema:"markdown or html"`
}

// UndoArgs is undo.UndoArgs on the wire.
type UndoArgs struct {
	EventID int64 `json:"event_id" rpc:"required"`
	// SkipConflicts applies what does not conflict and leaves the
	// conflicting files as they are; without it a conflict stops the
	// whole undo.
	SkipConflicts bool `json:"skip_conflicts,omitempty"`
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
	Context *Context `json:"context,omitempty"`
	Path    string   `json:"path" rpc:"required"`
	Version string   `json:"version" rpc:"required"`
}

// HistoryArgs is undo.HistoryArgs on the wire.
type HistoryArgs struct {
	Context *Context `json:"context,omitempty"`
	Path    string   `json:"path" rpc:"required"`
	Limit   int      `json:"limit,omitempty"`
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
	Client        string    `json:"client,omitempty"` // "": every agent
	Since         time.Time `json:"since" rpc:"required"`
	Until         time.Time `json:"until,omitempty"` // exclusive; zero: up to now
	DryRun        bool      `json:"dry_run,omitempty"`
	SkipConflicts bool      `json:"skip_conflicts,omitempty"`
}

// UndoClientResult is undo.UndoClientResult on the wire.
type UndoClientResult struct {
	Events    []UndoResult `json:"events"` // newest first, the order they are undone in
	Conflicts int          `json:"conflicts"`
	Applied   bool         `json:"applied"`
	DryRun    bool         `json:"dry_run,omitempty"`
}

// DocumentReadArgs is documents.DocumentReadArgs on the wire.
type DocumentReadArgs struct {
	Context *Context `json:"context,omitempty"`
	Reason  string   `json:"reason,omitempty"` // why, in the agent's words; shown if the owner is asked
	Path    string   `json:"path" rpc:"required" jsonschema:"the document to read"`
	Offset  int      `json:"offset,omitempty" jsonschema:"the first line of its text to return"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many lines to return"`
}

// DocumentResult is documents.DocumentResult on the wire.
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
