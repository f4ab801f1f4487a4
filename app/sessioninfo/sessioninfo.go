// Package sessioninfo answers session.info: the caller hears who it is
// to Corral (role, client, scope and folder, trust level), where it
// works (shared and output folders, roots) and what its commands may do
// (the sandbox, network, memory, running and timeout bounds, what can be
// undone); the owner also hears every scope it may browse, the audit
// log's vocabulary and size, the trust levels, the answers to questions
// in policy's words, and what Corral finished after a crash. app/server
// registers the row (decoding its params, passing the caller).
//
// It guarantees that an agent is told only of itself: the owner's parts
// (scopes, housekeeping, vocabulary, levels, recovery, the log's size)
// are left out of an agent's answer, and the words it shows come from
// the tables of core (audit.Operations, policy.Levels, netgate.Bundles),
// so no surface keeps a copy of its own.
//
// It does not check the caller (the server has authenticated it and read
// its settings as they are now), write anything, or follow a change of
// config.toml: the settings it says are those read at start.
package sessioninfo

import (
	"context"
	"time"

	"corral/app/wire"
	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
	"corral/store"
)

// Box is what session.info reads of the sandbox and its commands: the
// caller's scope and how the sandbox's parts stand now.
type Box interface {
	ScopeFor(c sandbox.Caller, ctx *sandbox.Context) (string, error)
	Policy() *policy.Policy
	Writable() error
	ExecInfo() (available bool, sandbox, why string)
	NetworkInfo() (bool, string)
	MemoryInfo() string
	Versions() *versions.Store
	CommandVersions(ctx context.Context) (bool, string)
	Recovered() *sandbox.Recovery
}

// Session answers session.info over the sandbox and the settings as
// they were read at start (a change to them needs a restart).
type Session struct {
	Box                  Box
	SharedDir, OutputDir string
	Roots                []Root        // the configured roots, as session.info lists them
	Running              string        // how many commands may run at once, in words
	Timeout              time.Duration // a command's default and longest wall time (exec.timeout)
	People               func() []string
	Version              string   // Corral's version (the dashboard's About)
	LogSize              LogSizer // nil: the store does not say
	Limit                string   // each agent's rate of calls, in words
	Now                  func() time.Time
}

// LogSizer is what session.info reads of the store about the audit
// log's size and growth (store.Store).
type LogSizer interface {
	LogSize(ctx context.Context, since time.Time) (store.LogSize, error)
}

// AuditLog is session.info's audit_log (owner only): the log's room
// on disk and how fast it grows.
type AuditLog struct {
	DBBytes          int64 `json:"db_bytes"`
	WALBytes         int64 `json:"wal_bytes"`
	Bytes            int64 `json:"bytes"` // db_bytes + wal_bytes
	EventsLastHour   int64 `json:"events_last_hour"`
	EventsLastMinute int64 `json:"events_last_minute"`
	// PerAgentLimit says how fast one agent's calls are taken.
	PerAgentLimit string `json:"per_agent_limit"`
}

// Root is a configured root as session.info lists it.
type Root struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}

// Exec is session.info's exec: what commands may do here.
type Exec struct {
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
	PackageManagers []wire.Bundle `json:"package_managers,omitempty"`
	// Versions says what the owner can undo of what commands change.
	Versions string `json:"versions,omitempty"`
}

// Info answers session.info: who the caller is, where it works and what
// Corral lets it do, and (the owner) how Corral stands.
type Info struct {
	Version   string `json:"version,omitempty"` // Corral's version, as `corral --version` says it
	Role      string `json:"role"`
	Client    string `json:"client"`
	Scope     string `json:"scope"`
	User      string `json:"user"`
	SharedDir string `json:"shared_dir"`
	OutputDir string `json:"output_dir"`
	Roots     []Root `json:"roots"`
	Exec      Exec   `json:"exec"`
	Paused    bool   `json:"paused"`
	// AuditProblem, when set, says why every agent operation is refused
	// now: Corral cannot write its audit log (the disk is full).
	AuditProblem string `json:"audit_problem,omitempty"`
	// Recovered (owner only) says what Corral finished at its last start
	// after a crash or kill (sandbox.Recover); absent when nothing was
	// left to finish.
	Recovered *Recovered `json:"recovered,omitempty"`
	Scopes    []string   `json:"scopes,omitempty"` // owner only: every scope it may browse
	// ActFor are the other scopes a client may name in a context ("*":
	// any); `corral mcp` offers the context parameter only then.
	ActFor []string `json:"act_for,omitempty"`
	// Housekeeping (owner only) is what audit.query's hide_own leaves out,
	// so the dashboard's live tail leaves out the same.
	Housekeeping *Housekeeping `json:"housekeeping,omitempty"`
	// Operations and Decisions (owner only) are the words and groups of
	// the audit log's vocabulary (audit.Operations), so the dashboard
	// keeps no copy of its own.
	Operations []Operation `json:"operations,omitempty"`
	Decisions  []Decision  `json:"decisions,omitempty"`
	// Choices (owner only) are every answer to a question in policy's
	// words, so an event's answer (audit.Event.Answer) reads as the
	// owner gave it.
	Choices []wire.Choice `json:"choices,omitempty"`
	// AuditLog (owner only) is the audit log's size on disk and growth.
	AuditLog *AuditLog `json:"audit_log,omitempty"`
	// Level (an agent) is its trust level; Levels (owner only) are the
	// named levels in policy's words, so no surface keeps a copy.
	Level  *Level  `json:"level,omitempty"`
	Levels []Level `json:"levels,omitempty"`
}

// Level is a trust level (policy.LevelInfo) on the wire.
type Level struct {
	Level       policy.Level `json:"level"`
	Label       string       `json:"label"`
	Explain     string       `json:"explain,omitempty"`
	AskCommands bool         `json:"ask_commands"`
	Network     string       `json:"network,omitempty"`
	ReadOnly    bool         `json:"read_only"`
}

func levelOut(li policy.LevelInfo) Level {
	return Level{Level: li.Level, Label: li.Label, Explain: li.Explain, AskCommands: li.AskCommands, Network: li.Network, ReadOnly: li.ReadOnly}
}

// agentLevel is the caller's trust level, in words.
func agentLevel(c sandbox.Caller) *Level {
	if li, ok := policy.LevelFor(c.Level); ok {
		l := levelOut(li)
		return &l
	}
	net := "ask"
	if c.NoNetwork {
		net = "off"
	}
	return &Level{Level: policy.LevelCustom, Label: policy.LevelCustom.Label(), AskCommands: c.AskCommands, Network: net}
}

// Recovered is what Corral finished at its last start.
type Recovered struct {
	At         string `json:"at"`
	Events     int    `json:"events"`
	Commands   int    `json:"commands"`
	RolledBack int    `json:"rolled_back"`
	Left       int    `json:"left"`
	TempFiles  int    `json:"temp_files"`
}

// Operation is one word of the audit log's vocabulary.
type Operation struct {
	Op     string   `json:"op"`
	Label  string   `json:"label"`
	Groups []string `json:"groups"`
}

// Decision is one decision of the audit log, in words.
type Decision struct {
	Decision string `json:"decision"`
	Label    string `json:"label"`
}

// vocabulary is audit's table of operations and decisions on the wire.
func vocabulary() ([]Operation, []Decision) {
	ops := make([]Operation, 0, len(audit.Operations))
	for _, o := range audit.Operations {
		ops = append(ops, Operation{o.Name, o.Label, append([]string{}, o.Groups...)})
	}
	ds := make([]Decision, 0, len(audit.DecisionLabels))
	for _, d := range audit.DecisionLabels {
		ds = append(ds, Decision{string(d.Decision), d.Label})
	}
	return ops, ds
}

// Housekeeping is what audit.query's hide_own leaves out.
type Housekeeping struct {
	OwnerClients []string `json:"owner_clients"`
	DevicePrefix string   `json:"device_prefix"`
	Ops          []string `json:"ops"`
}

// Info is session.info for the caller c: an agent hears of itself, its
// folder and what its commands may do; the owner also of every scope,
// the audit log's vocabulary and size, the trust levels and a recovery.
func (x Session) Info(ctx context.Context, c sandbox.Caller, a wire.InfoArgs) (Info, error) {
	scope, err := x.Box.ScopeFor(c, wire.To[*sandbox.Context](a.Context))
	if err != nil {
		return Info{}, err
	}
	info := Info{
		Version: x.Version, Role: "client", Client: c.Client, Scope: scope, User: c.User,
		SharedDir: x.SharedDir, OutputDir: x.OutputDir,
		Roots: []Root{}, ActFor: c.ActFor,
	}
	if c.Owner {
		info.Role, info.User = "owner", sandbox.ScopeDefault
		info.Scopes = append(x.People(), sandbox.ScopeCompanion, sandbox.ScopeDefault)
		info.Housekeeping = &Housekeeping{audit.OwnerClients, audit.DevicePrefix, audit.Housekeeping}
		info.Operations, info.Decisions = vocabulary()
		info.Choices = wire.To[[]wire.Choice](policy.AllChoices())
		for _, li := range policy.Levels() {
			info.Levels = append(info.Levels, levelOut(li))
		}
		if r := x.Box.Recovered(); r != nil && (r.Events > 0 || r.TempFiles > 0) {
			info.Recovered = &Recovered{At: r.At.Format(time.RFC3339), Events: r.Events, Commands: r.Commands,
				RolledBack: r.RolledBack, Left: r.Left, TempFiles: r.TempFiles}
		}
		info.AuditLog = x.auditLog(ctx)
	}
	if p := x.Box.Policy(); p != nil {
		info.Paused = p.Paused()
	}
	if !c.Owner && c.Level != "" {
		info.Level = agentLevel(c)
	}
	if err := x.Box.Writable(); err != nil {
		info.AuditProblem = errs.As(err).Msg
	}
	info.Exec.Available, info.Exec.Sandbox, info.Exec.Why = x.Box.ExecInfo()
	if x.Box.Versions() != nil {
		info.Exec.Versions = "Files changed by the file methods (write, edit, delete, move, apply_patch) are kept as versions the owner can restore."
		if ok, why := x.Box.CommandVersions(ctx); ok {
			info.Exec.Versions += " So are files a command creates, changes or deletes in its writable folders: command.run lists them in changes, and the owner can undo the command."
		} else {
			info.Exec.Versions += " Files a command changes are not recorded and cannot be undone: " + why
		}
	}
	if info.Exec.Available {
		info.Exec.Writable = []string{"$HOME (your folder)", "$HOME/playground", "/share"}
		for _, r := range x.Roots {
			if r.Access == "readwrite" {
				info.Exec.Writable = append(info.Exec.Writable, r.Path)
			}
		}
		info.Exec.Network = "off unless asked for. allowed_domains and package_managers give the command those domains only, those no rule decides asked of the owner in one question before the command starts (a domain not listed is refused at once); network=true gives any public domain and is asked every time. Programs reach the network only through Corral's proxy at " + execbox.ProxyAddr + " (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set); this computer and the home network are never reachable."
		if ok, why := x.Box.NetworkInfo(); !ok {
			info.Exec.Network = why
		}
		info.Exec.PackageManagers = wire.To[[]wire.Bundle](netgate.Bundles())
		info.Exec.Memory = x.Box.MemoryInfo()
		info.Exec.Running = x.Running
		info.Exec.TimeoutMs = x.Timeout.Milliseconds()
	}
	info.Roots = append(info.Roots, x.Roots...)
	return info, nil
}

// auditLog is the audit log's figures, or nil when the store cannot say.
func (x Session) auditLog(ctx context.Context) *AuditLog {
	if x.LogSize == nil {
		return nil
	}
	now := x.Now()
	hour, err := x.LogSize.LogSize(ctx, now.Add(-time.Hour))
	if err != nil {
		return nil
	}
	minute, err := x.LogSize.LogSize(ctx, now.Add(-time.Minute))
	if err != nil {
		return nil
	}
	return &AuditLog{
		DBBytes: hour.DBBytes, WALBytes: hour.WALBytes, Bytes: hour.DBBytes + hour.WALBytes,
		EventsLastHour: hour.EventsSince, EventsLastMinute: minute.EventsSince,
		PerAgentLimit: x.Limit,
	}
}
