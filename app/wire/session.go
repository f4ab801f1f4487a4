package wire

import "corral/core/policy"

// session.info's result, declared once: app/sessioninfo builds it (its
// names there are aliases), the WebSocket sends it, MCP's session_info
// states the members an agent reads as its output schema (the jsonschema
// tags), and the CLI reads it.

// SessionInfo answers session.info: who the caller is, where it works and what
// Corral lets it do, and (the owner) how Corral stands.
type SessionInfo struct {
	Version   string        `json:"version,omitempty"` // Corral's version, as `corral --version` says it
	Role      string        `json:"role"`
	Client    string        `json:"client"`
	Scope     string        `json:"scope" jsonschema:"the folder your paths resolve in"`
	User      string        `json:"user"`
	SharedDir string        `json:"shared_dir"`
	OutputDir string        `json:"output_dir"`
	Roots     []SessionRoot `json:"roots" jsonschema:"folders you may use by absolute path"`
	Exec      SessionExec   `json:"exec" jsonschema:"whether commands can run, and their limits"`
	Paused    bool          `json:"paused" jsonschema:"the owner has paused every agent"`
	// AuditProblem, when set, says why every agent operation is refused
	// now: Corral cannot write its audit log (the disk is full).
	AuditProblem string `json:"audit_problem,omitempty"`
	// Recovered (owner only) says what Corral finished at its last start
	// after a crash or kill (sandbox.Recover); absent when nothing was
	// left to finish.
	Recovered *SessionRecovered `json:"recovered,omitempty"`
	Scopes    []string          `json:"scopes,omitempty"` // owner only: every scope it may browse
	// ActFor are the other scopes a client may name in a context ("*":
	// any); `corral mcp` offers the context parameter only then.
	ActFor []string `json:"act_for,omitempty" jsonschema:"other folders you may name in a context"`
	// Housekeeping (owner only) is what audit.query's hide_own leaves out,
	// so the dashboard's live tail leaves out the same.
	Housekeeping *SessionHousekeeping `json:"housekeeping,omitempty"`
	// Operations and Decisions (owner only) are the words and groups of
	// the audit log's vocabulary (audit.Operations), so the dashboard
	// keeps no copy of its own.
	Operations []SessionOperation `json:"operations,omitempty"`
	Decisions  []SessionDecision  `json:"decisions,omitempty"`
	// Choices (owner only) are every answer to a question in policy's
	// words, so an event's answer (audit.Event.Answer) reads as the
	// owner gave it.
	Choices []Choice `json:"choices,omitempty"`
	// AuditLog (owner only) is the audit log's size on disk and growth.
	AuditLog *SessionAuditLog `json:"audit_log,omitempty"`
	// Level (an agent) is its trust level; Levels (owner only) are the
	// named levels in policy's words, so no surface keeps a copy.
	Level  *SessionLevel  `json:"level,omitempty"`
	Levels []SessionLevel `json:"levels,omitempty"`
}

// SessionRoot is a configured root as session.info lists it.
type SessionRoot struct {
	Path   string `json:"path"`
	Access string `json:"access" jsonschema:"read or readwrite"`
}

// SessionExec is session.info's exec: what commands may do here.
type SessionExec struct {
	Available bool     `json:"available"`
	Sandbox   string   `json:"sandbox"`
	Why       string   `json:"why,omitempty"`      // when unavailable: what the owner should do
	Writable  []string `json:"writable,omitempty"` // where commands may write; everything else is read-only
	Network   string   `json:"network,omitempty"`
	Memory    string   `json:"memory,omitempty"`  // how a command's memory is bounded
	Running   string   `json:"running,omitempty"` // how many commands may run at once
	// TimeoutMs is a command's default and longest timeout_ms (the
	// owner's exec.timeout); `corral mcp` states it in run_command's schema.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
	// PackageManagers are the bundles command.run's package_managers names.
	PackageManagers []Bundle `json:"package_managers,omitempty"`
	// Versions says what the owner can undo of what commands change.
	Versions string `json:"versions,omitempty"`
}

// SessionAuditLog is session.info's audit_log (owner only): the log's room
// on disk and how fast it grows.
type SessionAuditLog struct {
	DBBytes          int64 `json:"db_bytes"`
	WALBytes         int64 `json:"wal_bytes"`
	Bytes            int64 `json:"bytes"` // db_bytes + wal_bytes
	EventsLastHour   int64 `json:"events_last_hour"`
	EventsLastMinute int64 `json:"events_last_minute"`
	// PerAgentLimit says how fast one agent's calls are taken.
	PerAgentLimit string `json:"per_agent_limit"`
}

// SessionLevel is a trust level (policy.LevelInfo) on the
type SessionLevel struct {
	Level       policy.Level `json:"level"`
	Label       string       `json:"label"`
	Explain     string       `json:"explain,omitempty"`
	AskCommands bool         `json:"ask_commands"`
	Network     string       `json:"network,omitempty"`
	ReadOnly    bool         `json:"read_only"`
}

// SessionRecovered is what Corral finished at its last start.
type SessionRecovered struct {
	At         string `json:"at"`
	Events     int    `json:"events"`
	Commands   int    `json:"commands"`
	RolledBack int    `json:"rolled_back"`
	Left       int    `json:"left"`
	TempFiles  int    `json:"temp_files"`
}

// SessionOperation is one word of the audit log's vocabulary.
type SessionOperation struct {
	Op     string   `json:"op"`
	Label  string   `json:"label"`
	Groups []string `json:"groups"`
}

// SessionDecision is one decision of the audit log, in words.
type SessionDecision struct {
	Decision string `json:"decision"`
	Label    string `json:"label"`
}

// SessionHousekeeping is what audit.query's hide_own leaves out.
type SessionHousekeeping struct {
	OwnerClients []string `json:"owner_clients"`
	DevicePrefix string   `json:"device_prefix"`
	Ops          []string `json:"ops"`
}
