package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"corral/app/config"
	"corral/app/daemon"
	"corral/app/server"
	"corral/assets"
	"corral/ui"
	"corral/ui/pairwin"
)

// tray runs `corral` with no arguments: the daemon and the desktop UI in
// one process. Fyne owns the main goroutine, so the daemon runs on
// another. Without a display it says so in one line and runs headless;
// without a tray host or a session bus it says so and shows only the
// approval dialogs.
func tray(f serveFlags) error {
	if running, err := openRunning(f, 0); running {
		return err
	}
	desk := ui.Detect(os.Getenv)
	if desk.Display == "" {
		// After the start-up lines, as in desktop, so they always come first.
		return serve(f, desk.Note)
	}
	err := runDaemon(f, func(ctx context.Context, d *daemon.Daemon) error {
		return desktop(ctx, d, f.listen, desk)
	})
	if errors.Is(err, daemon.ErrRunning) {
		// Another one took the lock first: open it once it listens.
		if running, oerr := openRunning(f, 15*time.Second); running {
			return oerr
		}
	}
	// Started from the desktop, the owner may see no terminal: a broken
	// config gets a window too (the line on stderr stays).
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Fprintln(os.Stderr, "corral:", err)
		ui.ShowProblem(desk, configProblem(ce))
		return reported{err}
	}
	return err
}

// openRunning opens the dashboard of the Corral already running with the
// files f names, as `corral open` does, waiting up to wait for one that
// holds the lock to listen; it reports whether one runs. A second start
// from the menu shows the first one's window this way.
func openRunning(f serveFlags, wait time.Duration) (bool, error) {
	files, err := locate(f.config)
	if err != nil {
		return false, nil // the start-up proper says what is wrong
	}
	deadline := time.Now().Add(wait)
	u := daemon.RunningURL(files)
	for u == "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		u = daemon.RunningURL(files)
	}
	if u == "" {
		return false, nil
	}
	fmt.Printf("corral: Corral is already running at %s: opening its dashboard\n", u)
	return true, runOpen(nil)
}

// reported is an error already printed on stderr: main only exits.
type reported struct{ error }

// configProblem is a config error as the window tells it.
func configProblem(e *config.Error) ui.Problem {
	s := "Corral's settings file has a mistake"
	if e.Key != "" {
		s += " at “" + e.Key + "”"
	}
	return ui.Problem{Sentence: s + ": " + e.Msg + ".", File: e.File, Line: e.Line}
}

// desktop runs d on another goroutine and the desktop UI on this one until
// ctx ends, the owner quits or the daemon stops.
func desktop(ctx context.Context, d *daemon.Daemon, listen string, desk ui.Desktop) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	ready := make(chan *server.Server, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- d.Run(ctx, listen, func(s *server.Server) {
			announce(d, s)
			ready <- s
		})
	}()
	var srv *server.Server
	select {
	case srv = <-ready:
	case err := <-errc:
		return err
	}
	// Should the daemon stop on its own, the UI goes with it.
	done := make(chan error, 1)
	go func() {
		err := <-errc
		cancel()
		done <- err
	}()
	if desk.Note != "" {
		fmt.Println("corral:", desk.Note)
	}

	cfg := ui.Config{
		Broker:  d.Policy,
		Control: trayControl{d: d, s: srv},
		Events:  d.Store,
		Icons:   ui.Icons{App: assets.Icon, Tray: assets.IconTray, Pending: assets.IconPending, Paused: assets.IconPaused},
		Logger:  d.Log,
		// desktop.notifications, as the Settings page last set it.
		NotifyOff: func() bool { return srv.Setting("desktop.notifications") == false },
	}
	if exe, err := os.Executable(); err == nil {
		if a, err := ui.NewXDGAutostart(os.Getenv, exe); err == nil {
			cfg.Autostart = a
		}
	}
	if err := ui.Run(ctx, desk, cfg); err != nil && ctx.Err() == nil {
		// The UI is gone but Corral is not: carry on headless.
		fmt.Println("corral:", err, "- running headless")
		<-ctx.Done()
	}
	cancel()
	return <-done
}

// trayControl is the running Corral as the tray sees it. It is a
// pairwin.Pairer too: the menu offers "Pair a phone…", whose window shows the
// server's sentence when [server] lan is off.
type trayControl struct {
	d *daemon.Daemon
	s *server.Server
}

func (c trayControl) Status() ui.Status {
	st := ui.Status{Listen: c.s.LocalURL(), Agents: c.s.AgentsConnected(), Paused: c.d.Policy.Paused()}
	if err := c.d.Box.Writable(); err != nil {
		switch msg := err.Error(); {
		case strings.Contains(msg, "is full"):
			st.Problem = "the audit log's disk is full"
		case strings.Contains(msg, "version store"):
			st.Problem = "the version store cannot be written"
		default:
			st.Problem = "the audit log cannot be written"
		}
	}
	return st
}

var (
	_ pairwin.Pairer = trayControl{}
	_ ui.FirstRunner = trayControl{}
)

// SetPaused pauses or resumes agents as agents.pause does: questions are
// denied and running commands stopped.
func (c trayControl) SetPaused(ctx context.Context, paused bool) error {
	if err := c.d.Policy.SetPaused(ctx, paused, "tray"); err != nil {
		return err
	}
	if paused {
		c.d.Commands.StopCommands()
	}
	return nil
}

// FirstRun: no agent has worked yet (the tray's first notification).
func (c trayControl) FirstRun() bool { return c.s.FirstRun() }

func (c trayControl) LoginURL() (string, error) {
	u, _ := c.s.LoginURL()
	if u == "" {
		return "", errors.New("no login URL")
	}
	return u, nil
}

// Pair makes a one-time pairing code as pairing.start does; without the
// LAN listener the error is the server's sentence saying how to turn it on.
func (c trayControl) Pair(ctx context.Context) (pairwin.Code, error) {
	if err := ctx.Err(); err != nil {
		return pairwin.Code{}, err
	}
	p, err := c.s.StartPairing(ctx, "tray")
	if err != nil {
		if c.s.LANURL() == "" {
			return pairwin.Code{}, lanOff{err} // the window offers Turn on the LAN
		}
		return pairwin.Code{}, err
	}
	return pairwin.Code{URL: p.URL, QR: p.QR, Expires: p.Expires, Fingerprint: p.Fingerprint}, nil
}

func (c trayControl) Settings() ui.Settings {
	cfg := c.d.Config
	roots := make([]string, 0, len(cfg.Sandbox.Roots))
	for _, r := range cfg.Sandbox.Roots {
		roots = append(roots, r.Path+" ("+r.Access+")")
	}
	if len(roots) == 0 {
		roots = append(roots, "none")
	}
	clients := make([]string, 0, len(cfg.Clients))
	for _, cl := range cfg.Clients {
		clients = append(clients, cl.Name+" → "+cl.User)
	}
	lan := c.s.LANURL()
	if lan == "" {
		lan = "off"
	}
	values := []ui.Setting{
		{Name: "Listening on", Value: c.s.LocalURL()},
		{Name: "On your network", Value: lan},
	}
	// The same settings, with the same values, as the dashboard's Settings page.
	for _, l := range c.s.SettingLines() {
		name := l.Label
		if l.RestartNeeded {
			name += " (saved; after a restart)"
		}
		values = append(values, ui.Setting{Name: name, Value: l.Value})
	}
	values = append(values,
		ui.Setting{Name: "Sandbox folder", Value: cfg.Sandbox.Base},
		ui.Setting{Name: "Extra roots", Value: strings.Join(roots, "\n")},
		ui.Setting{Name: "Users", Value: strconv.Itoa(len(cfg.Users))},
		ui.Setting{Name: "Clients", Value: strings.Join(clients, "\n")},
		ui.Setting{Name: "Database", Value: c.d.Files.DB},
	)
	return ui.Settings{ConfigPath: cfg.Path, Values: values}
}

// shortDuration writes durations as the config does: "2m", "24h", "90d".
func shortDuration(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// lanOff is StartPairing's error while the LAN is off: its sentence, and
// pairwin.ErrLANOff to errors.Is.
type lanOff struct{ error }

func (lanOff) Is(target error) bool { return target == pairwin.ErrLANOff }

// TurnOnLAN turns the LAN on as the dashboard's Settings page does: the
// one line of config.toml, audited, and the LAN listener opened at once.
func (c trayControl) TurnOnLAN(ctx context.Context) error {
	_, err := c.s.SetSettings(ctx, "tray", map[string]any{"server.lan": true})
	return err
}
