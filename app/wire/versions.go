package wire

import "time"

// Usage is versions.Usage on the wire.
type Usage struct {
	Bytes    int64  `json:"bytes"`
	Blobs    int    `json:"blobs"`
	MaxBytes int64  `json:"max_bytes"`
	MaxAge   string `json:"max_age"`
	MaxFile  int64  `json:"max_file"`
	// Oldest is when the oldest kept version was stored (zero when none
	// is). It is measured at start and by each prune: a version stored
	// again since is younger than it says, never older.
	Oldest time.Time `json:"oldest,omitzero"`
	// AgentShare is the most one agent's versions may take.
	AgentShare int64 `json:"agent_share"`
	// Agents is what each holder's versions take, the largest first; the
	// owner's own (undo, restore) are under the client "owner".
	Agents []AgentUsage `json:"agents"`
}

// ForgetArgs is undo.ForgetArgs on the wire.
type ForgetArgs struct {
	Client string    `json:"client" rpc:"required"`
	Before time.Time `json:"before,omitzero"`
}

// ForgetResult is undo.ForgetResult on the wire.
type ForgetResult struct {
	Client   string `json:"client"`
	Versions int    `json:"versions"`
	Bytes    int64  `json:"bytes"`
}

// AgentUsage is versions.AgentUsage on the wire.
type AgentUsage struct {
	Client  string    `json:"client"`
	Bytes   int64     `json:"bytes"`
	Blobs   int       `json:"blobs"`
	Oldest  time.Time `json:"oldest,omitzero"`
	Refused int64     `json:"refused"`
}
