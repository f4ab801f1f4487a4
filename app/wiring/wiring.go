// Package wiring builds Corral's parts from a loaded config and an open
// store: the policy, the command runner with its network gate and egress
// proxy, the sandbox facade with its version store, links and undo. It
// builds everything but the server, which takes these parts through
// server.Config; app/daemon and app/server's tests both build Corral
// through Build and then server.New, so what the tests exercise is the
// wiring that runs (the way Tailscale's ipnserver builds
// localapi.NewHandler(HandlerConfig{…})).
//
// Guarantees: every part gets the same config values, the same clock
// (Setup.Clock) and logger; Corral's own folders (config, data, secrets,
// versions) are hidden from commands and guarded by the policy together
// with the owner's home and the sandbox base; Build refuses a config
// whose roots hold Corral's files (config.CheckRoots) before it builds
// anything, so no way of starting Corral skips that check.
//
// Not guaranteed: commands may be unavailable (no bubblewrap): that is
// logged, not an error. Build opens no listener; the caller closes Box
// when Corral stops (the store stays the caller's too).
package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"corral/app/config"
	"corral/app/egress"
	"corral/core/applypatch"
	"corral/core/commands"
	"corral/core/documents"
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
	Config *config.Config
	Files  config.Files
	Store  *store.Store
	Home   string // the owner's home folder ("~" in config)
	// NetInit is the corral-netinit program that gives commands network;
	// "": commands get no network.
	NetInit string
	// DocReader is the command that parses documents inside a sandbox:
	// Corral's own executable and its hidden subcommand. Empty: documents
	// are unavailable.
	DocReader []string
	// Resolver resolves the names commands connect to; nil: the system's.
	Resolver netgate.Resolver
	Clock    func() time.Time // nil: time.Now; every part reads this one
	Logger   *slog.Logger     // nil: slog.Default()
}

// Parts are Corral's wired parts, all but the server, which takes them
// through server.Config.
type Parts struct {
	Policy    *policy.Policy
	Box       *sandbox.Sandbox
	Links     *links.Service      // links over Box (link.create, /files/out)
	Undo      *undo.Service       // the owner's undo over Box; its RollBack is Recover's
	Commands  *commands.Service   // agents' commands over Box
	Patches   *applypatch.Service // file.apply_patch over Box
	Documents *documents.Service  // file.document_read over Box, parsed by DocReader
	// RotateLinks replaces the link-signing key (links.rotate): a fresh
	// secret in Files.Secret, then the links signed with it.
	RotateLinks func(ctx context.Context, by string) error
	// OnPause stops every command when the owner pauses the agents.
	OnPause func(paused bool)
}

// Build wires every part of Corral but the server from s: the policy,
// the command runner and its network gate, the sandbox facade, links and
// undo. The daemon and app/server's tests both start Corral through it.
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
	var docs documents.Config
	if len(s.DocReader) > 0 {
		docs = documents.Config{Runner: runner, Binary: s.DocReader[0], Args: s.DocReader[1:]}
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
	onPause := func(paused bool) {
		if paused {
			cmds.StopCommands()
		}
	}
	return Parts{Policy: pol, Box: box, Links: lk, Undo: un, Commands: cmds, RotateLinks: rotate, OnPause: onPause,
		Patches: applypatch.New(box), Documents: documents.New(box, docs)}, nil
}
