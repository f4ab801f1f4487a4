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

// vocabulary is audit's table of operations and decisions on the wire.
func vocabulary() ([]Operation, []Decision) {
	ops := make([]Operation, 0, len(audit.Operations))
	for _, o := range audit.Operations {
		ops = append(ops, Operation{Op: o.Name, Label: o.Label, Groups: append([]string{}, o.Groups...)})
	}
	ds := make([]Decision, 0, len(audit.DecisionLabels))
	for _, d := range audit.DecisionLabels {
		ds = append(ds, Decision{Decision: string(d.Decision), Label: d.Label})
	}
	return ops, ds
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
		info.Housekeeping = &Housekeeping{OwnerClients: audit.OwnerClients, DevicePrefix: audit.DevicePrefix, Ops: audit.Housekeeping}
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

// session.info's result is declared once, in app/wire (MCP's output
// schema and the CLI read it there); these are its names here.
type (
	Info         = wire.SessionInfo
	Root         = wire.SessionRoot
	Exec         = wire.SessionExec
	AuditLog     = wire.SessionAuditLog
	Level        = wire.SessionLevel
	Recovered    = wire.SessionRecovered
	Operation    = wire.SessionOperation
	Decision     = wire.SessionDecision
	Housekeeping = wire.SessionHousekeeping
)
