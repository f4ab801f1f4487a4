package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"corral/app/config"
	"corral/app/egress"
	"corral/core/commands"
	"corral/core/execbox"
	"corral/core/links"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/core/versions"
	"corral/store"
)

// Setup is what Build wires Corral from: the loaded config, where
// Corral's files are, and the open store.
type Setup struct {
	Config     *config.Config
	Files      config.Files
	Store      *store.Store
	Home       string // the owner's home folder ("~" in config)
	OwnerToken string
	Version    string // reported to MCP clients
	// NetInit is the corral-netinit program that gives commands network;
	// "": commands get no network.
	NetInit string
	// DocReader is the command that parses documents inside a sandbox:
	// Corral's own executable and its hidden subcommand. Empty: documents
	// are unavailable.
	DocReader []string
	// Resolver resolves the names commands connect to; nil: the system's.
	Resolver netgate.Resolver
	// CorralCommand is the corral program agent apps start for MCP; "":
	// the running executable.
	CorralCommand string
	Clock         func() time.Time // nil: time.Now; every part reads this one
	Logger        *slog.Logger     // nil: slog.Default()
}

// Parts are Corral's wired parts; Server is not yet listening.
type Parts struct {
	Policy *policy.Policy
	Box    *sandbox.Sandbox
	Undo   *undo.Service // the owner's undo over Box; its RollBack is Recover's
	Server *Server

	Commands *commands.Service // agents' commands over Box
}

// Build wires every part of Corral from s: the policy, the command
// runner and its network gate, the sandbox facade and the server. The
// daemon and this package's tests both start Corral through it, so what
// the tests exercise is the wiring that runs.
func Build(s Setup) (Parts, error) {
	cfg, st, log := s.Config, s.Store, s.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.CheckRoots(s.Files); err != nil {
		return Parts{}, err
	}
	secret, err := config.EnsureSecret(s.Files.Secret)
	if err != nil {
		return Parts{}, err
	}
	private := s.Files.OwnDirs()
	pol, err := policy.New(context.Background(), policy.Config{
		Rules: st, Audit: st, Timeout: cfg.Sandbox.ApprovalTimeout.D(), Strict: cfg.Sandbox.Strict, Logger: log, Clock: s.Clock,
		Guarded: append([]string{s.Home, cfg.Sandbox.Base}, private...), Home: s.Home,
	})
	if err != nil {
		return Parts{}, err
	}
	var vc versions.Config
	if cfg.Versions.Enabled {
		vc = versions.Config{Dir: s.Files.VersionsDir(), MaxAge: cfg.Versions.Retention.D(),
			MaxBytes: cfg.Versions.MaxSizeMB << 20, MaxFile: cfg.Versions.MaxFileMB << 20, Logger: log}
	}
	runner, err := execbox.NewRunner(execbox.Options{
		Hidden:  private,
		Limits:  execbox.Limits{Total: cfg.Exec.MaxMemoryMB << 20},
		NetInit: s.NetInit,
		Logger:  log,
	})
	if err != nil {
		return Parts{}, fmt.Errorf("command sandbox: %w", err)
	}
	if ok, _, why := runner.Available(); !ok && cfg.Exec.Enabled {
		log.Warn("commands unavailable", "why", why)
	}
	var docs sandbox.DocConfig
	if len(s.DocReader) > 0 {
		docs = sandbox.DocConfig{Runner: runner, Binary: s.DocReader[0], Args: s.DocReader[1:]}
	}
	gate, err := netgate.New(netgate.Config{
		Policy: pol, Audit: st, Resolver: s.Resolver, AllowPrivate: cfg.Exec.AllowPrivate, Logger: log, Clock: s.Clock,
		MaxConns: cfg.Exec.MaxConnections, MaxUpload: cfg.Exec.MaxUploadMB << 20,
	})
	if err != nil {
		return Parts{}, &config.Error{File: s.Files.Config, Key: "exec.allow_private", Msg: err.Error()}
	}
	proxy := func(ctx context.Context, c net.Conn, dl netgate.Dialer) {
		egress.Serve(ctx, c, dl, egress.Options{Logger: log})
	}
	box, err := sandbox.Open(sandbox.Config{
		Layout: cfg.Layout(s.Home), Users: cfg.UserIDs(), Audit: st, Policy: pol, Private: private, Clock: s.Clock, Logger: log,
		Versions: vc, Quota: cfg.Sandbox.QuotaMB << 20,
		Docs: docs,
	})
	if err != nil {
		return Parts{}, fmt.Errorf("sandbox base %s: %w", cfg.Sandbox.Base, err)
	}
	cmds := commands.New(box, commands.Config{
		Runner: runner, Enabled: cfg.Exec.Enabled, Ask: cfg.Exec.Ask, Timeout: cfg.Exec.Timeout.D(), MaxOutput: cfg.Exec.MaxOutputKB << 10,
		MaxRunning: cfg.Exec.MaxRunning, MaxPerClient: cfg.Exec.MaxRunningPerAgent, QueueWait: cfg.Exec.QueueWait.D(),
		Gate: gate, Proxy: proxy,
	})
	lk, err := links.New(box, links.LinkConfig{
		Secret: secret, Expiry: cfg.Links.Expiry.D(), MaxExpiry: cfg.Links.MaxExpiry.D(), SaveResultMaxKB: cfg.Links.SaveResultMaxKB,
		Ledger: st,
	})
	if err != nil {
		box.Close()
		return Parts{}, err
	}
	un := undo.New(box, st)
	rotate := func(ctx context.Context, by string) error {
		fresh, err := config.RotateSecret(s.Files.Secret)
		if err != nil {
			return err
		}
		return lk.RotateLinks(ctx, fresh, by)
	}
	srv := New(Options{
		Config: cfg, Sandbox: box, Links: lk, Undo: un, Commands: cmds, Audit: st, OwnerToken: s.OwnerToken, Logger: log, Clock: s.Clock, RotateLinks: rotate, Version: s.Version,
		Devices: st, Sessions: st, Agents: st, LANCertFile: s.Files.LANCert(), Home: s.Home, CorralCommand: s.CorralCommand,
		OnPause: func(paused bool) {
			if paused {
				cmds.StopCommands()
			}
		},
	})
	srv.policy, srv.files = pol, s.Files // settings.set (settings.go)
	pol.SetLevelOf(srv.dir.LevelOf)      // every question carries its agent's trust level
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.LoadAgents(ctx); err != nil {
		box.Close()
		return Parts{}, fmt.Errorf("agents and people in the database: %w", err)
	}
	return Parts{Policy: pol, Box: box, Undo: un, Commands: cmds, Server: srv}, nil
}
