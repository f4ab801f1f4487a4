package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"corral/app/config"
	"corral/app/server"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/store"
)

// daemon is everything `corral serve` runs, wired together.
type daemon struct {
	files  config.Files
	cfg    *config.Config
	store  *store.Store
	box    *sandbox.Sandbox
	server *server.Server
	log    *slog.Logger
}

type serveFlags struct {
	headless bool
	config   string
	listen   string
}

func parseServeFlags(name string, args []string) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.BoolVar(&f.headless, "headless", false, "run without the tray")
	fs.StringVar(&f.config, "config", "", "config file (default: CORRAL_HOME or XDG location)")
	fs.StringVar(&f.listen, "listen", "", "listen address, overriding [server] listen")
	return f, fs.Parse(args)
}

// loadConfig finds Corral's files and loads the config (--config wins).
func loadConfig(configFlag string) (config.Files, *config.Config, error) {
	files, err := config.Locate(os.Getenv)
	if err != nil {
		return files, nil, err
	}
	if configFlag != "" {
		if files.Config, err = filepath.Abs(configFlag); err != nil {
			return files, nil, err
		}
	}
	home, _ := os.UserHomeDir()
	cfg, err := config.Load(files.Config, home, files.Sandbox)
	return files, cfg, err
}

func openDaemon(f serveFlags, log *slog.Logger) (*daemon, error) {
	files, cfg, err := loadConfig(f.config)
	if err != nil {
		return nil, err
	}
	secret, err := config.EnsureSecret(files.Secret)
	if err != nil {
		return nil, err
	}
	owner, err := config.EnsureOwnerToken(files.OwnerToken)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(files.DB), 0o700); err != nil {
		return nil, err
	}
	st, err := store.Open(files.DB, store.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", files.DB, err)
	}
	pol, err := policy.New(context.Background(), policy.Config{
		Rules: st, Audit: st, Timeout: cfg.Sandbox.ApprovalTimeout.D(), Strict: cfg.Sandbox.Strict, Logger: log,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	home, _ := os.UserHomeDir()
	box, err := sandbox.New(sandbox.Config{Layout: cfg.Layout(home), Users: cfg.UserIDs(), Audit: st, Policy: pol, Logger: log})
	if err == nil {
		err = box.SetLinks(sandbox.LinkConfig{
			Secret: secret, Expiry: cfg.Links.Expiry.D(), MaxExpiry: cfg.Links.MaxExpiry.D(), SaveResultMaxKB: cfg.Links.SaveResultMaxKB,
		})
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("sandbox base %s: %w", cfg.Sandbox.Base, err)
	}
	rotate := func(ctx context.Context, by string) error {
		fresh, err := config.RotateSecret(files.Secret)
		if err != nil {
			return err
		}
		return box.RotateLinks(ctx, fresh, by)
	}
	srv := server.New(server.Options{Config: cfg, Sandbox: box, Audit: st, OwnerToken: owner, Logger: log, RotateLinks: rotate})
	return &daemon{files: files, cfg: cfg, store: st, box: box, server: srv, log: log}, nil
}

func (d *daemon) Close() {
	d.box.Close()
	if err := d.store.Close(); err != nil {
		d.log.Error("close database", "err", err)
	}
}

// prune applies the audit retention now and then daily until ctx ends.
func (d *daemon) prune(ctx context.Context) {
	for {
		before := time.Now().Add(-d.cfg.Audit.Retention.D())
		if n, err := d.store.Prune(ctx, before); err != nil {
			d.log.Error("audit retention", "err", err)
		} else if n > 0 {
			d.log.Info("audit retention", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(24 * time.Hour):
		}
	}
}

// run serves until ctx ends, printing the start-up lines when ready.
func (d *daemon) run(ctx context.Context, listen string) error {
	ln, err := d.server.Listen(listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	go d.prune(ctx)
	login, _ := d.server.LoginURL()
	fmt.Printf("corral: listening on %s\n", d.server.LocalURL())
	fmt.Printf("corral: dashboard %s\n", login)
	d.log.Info("ready", "config", d.cfg.Path, "sandbox", d.cfg.Sandbox.Base, "owner_token", d.files.OwnerToken)
	return d.server.Serve(ctx, ln, 10*time.Second)
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func runServe(args []string) error {
	f, err := parseServeFlags("serve", args)
	if err != nil {
		return err
	}
	return serve(f)
}

func serve(f serveFlags) error {
	log := newLogger()
	d, err := openDaemon(f, log)
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return d.run(ctx, f.listen)
}

// runTray starts the tray app. This build has no tray yet: it says so
// and runs headless.
func runTray(args []string) error {
	f, err := parseServeFlags("corral", args)
	if err != nil {
		return err
	}
	fmt.Println("corral: the tray is not part of this build yet; running headless")
	return serve(f)
}
