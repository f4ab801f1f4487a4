package server

import (
	"context"
	"fmt"
	"time"

	"corral/app/wire"
	"corral/core/audit"
	"corral/core/commands"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
	"corral/store"
)

// sessionBox is what session.info reads of the sandbox: the caller's
// scope and how the sandbox's parts stand now.
type sessionBox interface {
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

// sessionArea answers session.info and session.login.
type sessionArea struct {
	box                  sessionBox
	sharedDir, outputDir string
	roots                []rootInfo    // the configured roots, as session.info lists them
	running              string        // how many commands may run at once, in words
	timeout              time.Duration // a command's default and longest wall time (exec.timeout)
	people               func() []string
	record               recordFunc
	loginURL             func() (string, time.Time) // a one-time dashboard login (Server.LoginURL)
	version              string                     // Corral's version (the dashboard's About)
	logSize              auditSizer                 // nil: the store does not say
	limit                string                     // each agent's rate of calls, in words
	now                  func() time.Time
}

// auditSizer is what session.info reads of the store about the audit
// log's size and growth (store.Store).
type auditSizer interface {
	LogSize(ctx context.Context, since time.Time) (store.LogSize, error)
}

// auditLogInfo is session.info's audit_log (owner only): the log's room
// on disk and how fast it grows.
type auditLogInfo struct {
	DBBytes          int64 `json:"db_bytes"`
	WALBytes         int64 `json:"wal_bytes"`
	Bytes            int64 `json:"bytes"` // db_bytes + wal_bytes
	EventsLastHour   int64 `json:"events_last_hour"`
	EventsLastMinute int64 `json:"events_last_minute"`
	// PerAgentLimit says how fast one agent's calls are taken.
	PerAgentLimit string `json:"per_agent_limit"`
}

// sessionParts are the sandbox and its commands, as session.info reads
// them (sessionBox).
type sessionParts struct {
	*sandbox.Sandbox
	*commands.Service
}

// sessionArea is the session methods over this server's sandbox, its
// settings as they were read at start (a change to them needs a restart)
// and its directory of people.
func (s *Server) sessionArea() sessionArea {
	x := sessionArea{box: sessionParts{s.box, s.cmds}, sharedDir: s.cfg.Sandbox.SharedDir, outputDir: s.cfg.Sandbox.OutputDir,
		running: fmt.Sprintf("at most %d commands at once for all agents together and %d per agent; more wait up to %s for a free slot", s.cfg.Exec.MaxRunning, s.cfg.Exec.MaxRunningPerAgent, s.cfg.Exec.QueueWait.D()),
		people:  s.dir.PersonIDs, record: s.record, loginURL: s.LoginURL, version: s.version, now: s.now}
	x.logSize, _ = s.audit.(auditSizer)
	x.limit = s.calls.describe()
	x.timeout = s.cfg.Exec.Timeout.D()
	for _, r := range s.cfg.Sandbox.Roots {
		x.roots = append(x.roots, rootInfo{Path: r.Path, Access: r.Access})
	}
	return x
}

func (x sessionArea) methods(add func(name string, m method)) {
	add("session.info", method{fn: x.info})
	add("session.login", method{owner: true, fn: x.login})
}

type rootInfo struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}

type execInfo struct {
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

type sessionInfo struct {
	Version   string     `json:"version,omitempty"` // Corral's version, as `corral --version` says it
	Role      string     `json:"role"`
	Client    string     `json:"client"`
	Scope     string     `json:"scope"`
	User      string     `json:"user"`
	SharedDir string     `json:"shared_dir"`
	OutputDir string     `json:"output_dir"`
	Roots     []rootInfo `json:"roots"`
	Exec      execInfo   `json:"exec"`
	Paused    bool       `json:"paused"`
	// AuditProblem, when set, says why every agent operation is refused
	// now: Corral cannot write its audit log (the disk is full).
	AuditProblem string `json:"audit_problem,omitempty"`
	// Recovered (owner only) says what Corral finished at its last start
	// after a crash or kill (sandbox.Recover); absent when nothing was
	// left to finish.
	Recovered *recoveredInfo `json:"recovered,omitempty"`
	Scopes    []string       `json:"scopes,omitempty"` // owner only: every scope it may browse
	// ActFor are the other scopes a client may name in a context ("*":
	// any); `corral mcp` offers the context parameter only then.
	ActFor []string `json:"act_for,omitempty"`
	// Housekeeping (owner only) is what audit.query's hide_own leaves out,
	// so the dashboard's live tail leaves out the same.
	Housekeeping *housekeeping `json:"housekeeping,omitempty"`
	// Operations and Decisions (owner only) are the words and groups of
	// the audit log's vocabulary (audit.Operations), so the dashboard
	// keeps no copy of its own.
	Operations []operationInfo `json:"operations,omitempty"`
	Decisions  []decisionInfo  `json:"decisions,omitempty"`
	// Choices (owner only) are every answer to a question in policy's
	// words, so an event's answer (audit.Event.Answer) reads as the
	// owner gave it.
	Choices []wire.Choice `json:"choices,omitempty"`
	// AuditLog (owner only) is the audit log's size on disk and growth.
	AuditLog *auditLogInfo `json:"audit_log,omitempty"`
	// Level (an agent) is its trust level; Levels (owner only) are the
	// named levels in policy's words, so no surface keeps a copy.
	Level  *levelInfo  `json:"level,omitempty"`
	Levels []levelInfo `json:"levels,omitempty"`
}

// levelInfo is a trust level (policy.LevelInfo) on the wire.
type levelInfo struct {
	Level       policy.Level `json:"level"`
	Label       string       `json:"label"`
	Explain     string       `json:"explain,omitempty"`
	AskCommands bool         `json:"ask_commands"`
	Network     string       `json:"network,omitempty"`
	ReadOnly    bool         `json:"read_only"`
}

func levelOut(li policy.LevelInfo) levelInfo {
	return levelInfo{Level: li.Level, Label: li.Label, Explain: li.Explain, AskCommands: li.AskCommands, Network: li.Network, ReadOnly: li.ReadOnly}
}

// agentLevel is the caller's trust level, in words.
func agentLevel(c sandbox.Caller) *levelInfo {
	if li, ok := policy.LevelFor(c.Level); ok {
		l := levelOut(li)
		return &l
	}
	net := "ask"
	if c.NoNetwork {
		net = "off"
	}
	return &levelInfo{Level: policy.LevelCustom, Label: policy.LevelCustom.Label(), AskCommands: c.AskCommands, Network: net}
}

type recoveredInfo struct {
	At         string `json:"at"`
	Events     int    `json:"events"`
	Commands   int    `json:"commands"`
	RolledBack int    `json:"rolled_back"`
	Left       int    `json:"left"`
	TempFiles  int    `json:"temp_files"`
}

type operationInfo struct {
	Op     string   `json:"op"`
	Label  string   `json:"label"`
	Groups []string `json:"groups"`
}

type decisionInfo struct {
	Decision string `json:"decision"`
	Label    string `json:"label"`
}

// vocabulary is audit's table of operations and decisions on the wire.
func vocabulary() ([]operationInfo, []decisionInfo) {
	ops := make([]operationInfo, 0, len(audit.Operations))
	for _, o := range audit.Operations {
		ops = append(ops, operationInfo{o.Name, o.Label, append([]string{}, o.Groups...)})
	}
	ds := make([]decisionInfo, 0, len(audit.DecisionLabels))
	for _, d := range audit.DecisionLabels {
		ds = append(ds, decisionInfo{string(d.Decision), d.Label})
	}
	return ops, ds
}

type housekeeping struct {
	OwnerClients []string `json:"owner_clients"`
	DevicePrefix string   `json:"device_prefix"`
	Ops          []string `json:"ops"`
}

func (x sessionArea) info(ctx context.Context, c *call) (any, error) {
	a, err := decode[wire.InfoArgs](c)
	if err != nil {
		return nil, err
	}
	scope, err := x.box.ScopeFor(c.caller, wire.To[*sandbox.Context](a.Context))
	if err != nil {
		return nil, err
	}
	info := sessionInfo{
		Version: x.version, Role: "client", Client: c.caller.Client, Scope: scope, User: c.caller.User,
		SharedDir: x.sharedDir, OutputDir: x.outputDir,
		Roots: []rootInfo{}, ActFor: c.caller.ActFor,
	}
	if c.caller.Owner {
		info.Role, info.User = "owner", sandbox.ScopeDefault
		info.Scopes = append(x.people(), sandbox.ScopeCompanion, sandbox.ScopeDefault)
		info.Housekeeping = &housekeeping{audit.OwnerClients, audit.DevicePrefix, audit.Housekeeping}
		info.Operations, info.Decisions = vocabulary()
		info.Choices = wire.To[[]wire.Choice](policy.AllChoices())
		for _, li := range policy.Levels() {
			info.Levels = append(info.Levels, levelOut(li))
		}
		if r := x.box.Recovered(); r != nil && (r.Events > 0 || r.TempFiles > 0) {
			info.Recovered = &recoveredInfo{At: r.At.Format(time.RFC3339), Events: r.Events, Commands: r.Commands,
				RolledBack: r.RolledBack, Left: r.Left, TempFiles: r.TempFiles}
		}
		info.AuditLog = x.auditLog(ctx)
	}
	if p := x.box.Policy(); p != nil {
		info.Paused = p.Paused()
	}
	if !c.caller.Owner && c.caller.Level != "" {
		info.Level = agentLevel(c.caller)
	}
	if err := x.box.Writable(); err != nil {
		info.AuditProblem = errs.As(err).Msg
	}
	info.Exec.Available, info.Exec.Sandbox, info.Exec.Why = x.box.ExecInfo()
	if x.box.Versions() != nil {
		info.Exec.Versions = "Files changed by the file methods (write, edit, delete, move, apply_patch) are kept as versions the owner can restore."
		if ok, why := x.box.CommandVersions(ctx); ok {
			info.Exec.Versions += " So are files a command creates, changes or deletes in its writable folders: command.run lists them in changes, and the owner can undo the command."
		} else {
			info.Exec.Versions += " Files a command changes are not recorded and cannot be undone: " + why
		}
	}
	if info.Exec.Available {
		info.Exec.Writable = []string{"$HOME (your folder)", "$HOME/playground", "/share"}
		for _, r := range x.roots {
			if r.Access == "readwrite" {
				info.Exec.Writable = append(info.Exec.Writable, r.Path)
			}
		}
		info.Exec.Network = "off unless asked for. allowed_domains and package_managers give the command those domains only, those no rule decides asked of the owner in one question before the command starts (a domain not listed is refused at once); network=true gives any public domain and is asked every time. Programs reach the network only through Corral's proxy at " + execbox.ProxyAddr + " (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set); this computer and the home network are never reachable."
		if ok, why := x.box.NetworkInfo(); !ok {
			info.Exec.Network = why
		}
		info.Exec.PackageManagers = wire.To[[]wire.Bundle](netgate.Bundles())
		info.Exec.Memory = x.box.MemoryInfo()
		info.Exec.Running = x.running
		info.Exec.TimeoutMs = x.timeout.Milliseconds()
	}
	info.Roots = append(info.Roots, x.roots...)
	return info, nil
}

func (x sessionArea) login(ctx context.Context, c *call) (any, error) {
	if err := x.record(ctx, c.caller.Client, "session.login", "dashboard", "a one-time dashboard login was issued"); err != nil {
		return nil, err
	}
	u, exp := x.loginURL()
	return loginResult{URL: u, ExpiresAt: exp.UTC().Format(time.RFC3339)}, nil
}

// auditLog is the audit log's figures, or nil when the store cannot say.
func (x sessionArea) auditLog(ctx context.Context) *auditLogInfo {
	if x.logSize == nil {
		return nil
	}
	now := x.now()
	hour, err := x.logSize.LogSize(ctx, now.Add(-time.Hour))
	if err != nil {
		return nil
	}
	minute, err := x.logSize.LogSize(ctx, now.Add(-time.Minute))
	if err != nil {
		return nil
	}
	return &auditLogInfo{
		DBBytes: hour.DBBytes, WALBytes: hour.WALBytes, Bytes: hour.DBBytes + hour.WALBytes,
		EventsLastHour: hour.EventsSince, EventsLastMinute: minute.EventsSince,
		PerAgentLimit: x.limit,
	}
}
