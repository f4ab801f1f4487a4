package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"corral/app/config"
	"corral/app/daemon"
	"corral/app/server"
)

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

// locate finds Corral's files; --config wins over the located config.
func locate(configFlag string) (config.Files, error) {
	files, err := config.Locate(os.Getenv)
	if err != nil {
		return files, err
	}
	if configFlag != "" {
		files.Config, err = filepath.Abs(configFlag)
	}
	return files, err
}

// loadConfig is for client subcommands: where the daemon listens, and the
// owner token's place.
func loadConfig(configFlag string) (config.Files, *config.Config, error) {
	files, err := locate(configFlag)
	if err != nil {
		return files, nil, err
	}
	home, _ := os.UserHomeDir()
	cfg, err := config.Load(files.Config, home, files.Sandbox)
	return files, cfg, err
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func runServe(args []string) error {
	f, err := parseServeFlags("serve", args)
	if err != nil {
		return err
	}
	return serve(f, "")
}

// openDaemon locates Corral's files and wires a daemon from them.
func openDaemon(f serveFlags) (*daemon.Daemon, error) {
	files, err := locate(f.config)
	if err != nil {
		return nil, err
	}
	var reader []string
	if exe, err := os.Executable(); err == nil {
		reader = []string{exe, docreadCommand}
	}
	return daemon.Open(daemon.Options{Files: files, Logger: newLogger(), Version: version, DocReader: reader})
}

// announce prints the two start-up lines of docs/protocol.md section 3 once
// the server listens.
func announce(d *daemon.Daemon, s *server.Server) {
	login, _ := s.LoginURL()
	fmt.Printf("corral: listening on %s\n", s.LocalURL())
	fmt.Printf("corral: dashboard %s\n", login)
	fmt.Printf("corral: that link works once, within 2 minutes; `corral open` makes a new one\n")
	if lan := s.LANURL(); lan != "" {
		fmt.Printf("corral: on your network (paired phones, links): %s\n", lan)
	}
	fmt.Printf("corral: agents: give one a [[clients]] key from %s as CORRAL_KEY with CORRAL_URL=%s; MCP clients run `corral mcp` with both set\n", d.Config.Path, s.LocalURL())
	d.Log.Info("ready", "config", d.Config.Path, "sandbox", d.Config.Sandbox.Base, "owner_token", d.Files.OwnerToken)
}

// runDaemon opens the daemon and calls run with it and a context that
// ends on SIGINT or SIGTERM; the daemon is closed after. On SIGUSR1 (the
// package's maintainer scripts after an upgrade) it stops the same way
// and then starts again from the installed program: errRestart.
func runDaemon(f serveFlags, run func(ctx context.Context, d *daemon.Daemon) error) error {
	tuneDaemonGC()
	d, err := openDaemon(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, restart := context.WithCancelCause(ctx)
	// The dashboard's Restart Corral (corral.restart) does what SIGUSR1 does.
	d.Server.SetRestart(func() {
		d.Log.Info("restarting (the owner asked, to apply settings)")
		restart(errRestart)
	})
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	go func() {
		select {
		case <-usr1:
			d.Log.Info("restarting into the installed program (SIGUSR1: Corral was upgraded)")
			restart(errRestart)
		case <-ctx.Done():
		}
	}()
	err = run(ctx, d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(context.Cause(ctx), errRestart) {
		return errRestart
	}
	return err
}

// errRestart asks main to start Corral again, in place, from its program
// file as it is now on disk (a new version after an upgrade).
var errRestart = errors.New("restart")

// reexec replaces this process with the program now installed at its
// path, with the same arguments and environment: same PID, so a systemd
// unit or the desktop session keeps tracking it.
func reexec() error {
	exe, err := os.Executable() // without " (deleted)" once the package replaced it
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, os.Environ())
}

// serve runs the daemon until SIGINT or SIGTERM. note, if set, is printed
// as one more line after the start-up lines (the headless tray's reason).
func serve(f serveFlags, note string) error {
	return runDaemon(f, func(ctx context.Context, d *daemon.Daemon) error {
		return d.Run(ctx, f.listen, func(s *server.Server) {
			announce(d, s)
			if note != "" {
				fmt.Println("corral:", note)
			}
		})
	})
}

// runTray starts the tray app (app/tray.go); with no display it says so
// and runs headless.
func runTray(args []string) error {
	f, err := parseServeFlags("corral", args)
	if err != nil {
		return err
	}
	return tray(f)
}
