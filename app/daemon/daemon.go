// Package daemon starts Corral: it loads the config, makes the owner's
// token, holds the lock that keeps one daemon per set of files, opens the
// SQLite store, has wiring.Build wire the parts (the policy, the command
// runner, the sandbox facade, links, undo) and hands them to the HTTP
// server through server.New, as app/server's tests do. `corral serve`,
// the tray app and end-to-end tests all start Corral through it.
//
// Guarantees: Open starts nothing unless the config validates, the
// sandbox base holds none of Corral's own folders (config, data, secrets)
// and no root overlaps them or the base (compared by their real names).
// Those folders are hidden from commands and guarded by the policy.
// Commands use a copy of corral-netinit made at start in Corral's data
// folder, so upgrading or removing the package under a running daemon
// leaves its commands working. One
// daemon runs per set of files: a second Open fails with a sentence that
// says so, naming the running one's URL once it listens (an flock on
// corral.lock, which holds that URL only while it listens, so RunningURL
// never names a dead daemon or anything but a loopback http URL). Run
// serves until ctx ends, then drains calls under way for up to 10 s;
// Close flushes the audit writer. Before Open returns, what a crash or
// kill interrupted is finished (sandbox.Recover: rolled back, temporary
// files removed). A changed config.toml is read again:
// people and agents take effect at once, a file that does not validate
// leaves what runs as it was, and the checks above apply to it too.
//
// Not guaranteed: other settings changed in config.toml take effect only
// after a restart (the server says which), except those the server
// applies live (app/settings: the LAN, the question timeout and strict
// mode, the link limits, desktop notifications). Audit retention and version
// pruning run at start and then daily, so the log may hold up to a day
// more than the retention. Commands may be unavailable (no bubblewrap):
// that is logged, not an error.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"corral/app/config"
	"corral/app/server"
	"corral/app/wiring"
	"corral/core/commands"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/store"
)

// Daemon is a wired, not yet listening Corral.
type Daemon struct {
	Files  config.Files
	Config *config.Config
	Store  *store.Store
	Policy *policy.Policy
	Box    *sandbox.Sandbox
	Undo   *undo.Service
	Server *server.Server
	Log    *slog.Logger
	lock   *os.File // held while this daemon runs; holds its URL once it listens
	now    func() time.Time
	home   string // the owner's home folder

	Commands *commands.Service // agents' commands over Box
}

// LockFile is where a running daemon holds its lock and writes the URL it
// listens on, next to the database: `corral call` and friends find it
// there when CORRAL_URL is not set.
func LockFile(files config.Files) string {
	return filepath.Join(filepath.Dir(files.DB), "corral.lock")
}

// RunningURL is the URL of the daemon that holds the lock of files, or ""
// when none does (a URL left by one that died is ignored) or the file
// names anything but a loopback http URL.
func RunningURL(files config.Files) string {
	f, err := os.Open(LockFile(files))
	if err != nil {
		return ""
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return "" // nobody holds it: no daemon runs
	}
	u, err := url.Parse(lockedURL(f))
	if err != nil || u.Scheme != "http" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return ""
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return ""
	}
	return u.String()
}

// ErrRunning is what Open's error wraps when another Corral holds the
// lock of the same files.
var ErrRunning = errors.New("Corral is already running with these files")

// acquire takes the lock of files for this process, or says which daemon
// holds it.
func acquire(files config.Files) (*os.File, error) {
	name := LockFile(files)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if !lockExclusive(f) {
		where := ""
		if u := lockedURL(f); u != "" {
			where = " at " + u
		}
		f.Close()
		return nil, fmt.Errorf("%w%s (lock %s); stop it first, or give this one another CORRAL_HOME", ErrRunning, where, name)
	}
	f.Truncate(0) // a URL left by a daemon that died is not this one's
	return f, nil
}

// lockExclusive takes f's lock for this process. A CLI looking for the
// daemon holds a shared lock for a moment: it tries again briefly before
// calling the lock taken.
func lockExclusive(f *os.File) bool {
	for range 10 {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// lockedURL is what the daemon holding the lock file f wrote in it.
func lockedURL(f *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(f, 256))
	return strings.TrimSpace(string(b))
}

// Options choose where Corral's files are and how it logs.
type Options struct {
	Files   config.Files // from config.Locate, possibly with Config overridden
	Home    string       // the owner's home ("~" in config); "" = os.UserHomeDir
	Logger  *slog.Logger
	Version string
	// NetInit is the corral-netinit program that gives commands network;
	// "" = NetInitPath().
	NetInit string
	// DocReader is the command that parses documents (file.document_read)
	// inside a sandbox: Corral's own executable and its hidden
	// subcommand. Empty: documents are unavailable.
	DocReader []string
	Clock     func() time.Time // nil: time.Now; every part reads this one
}

// NetInitPath finds corral-netinit: $CORRAL_NETINIT, else next to this
// program (bin/ after `make build`), else where packages install it.
func NetInitPath() string {
	if p := os.Getenv("CORRAL_NETINIT"); p != "" {
		return p
	}
	candidates := []string{"/usr/lib/corral/corral-netinit", "/usr/libexec/corral/corral-netinit"}
	if exe, err := os.Executable(); err == nil {
		candidates = append([]string{filepath.Join(filepath.Dir(exe), "corral-netinit")}, candidates...)
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// keepNetInit copies the corral-netinit program at src into dir (Corral's
// data folder, which the lock makes this daemon's alone) and returns the
// copy's path, so commands keep their helper when a package upgrade
// replaces src or a removal deletes it while Corral runs (bubblewrap
// binds the helper by path: an open descriptor of a deleted file cannot
// be bound). On any error it logs and returns src.
func keepNetInit(src, dir string, log *slog.Logger) string {
	if src == "" {
		return ""
	}
	dst := filepath.Join(dir, "corral-netinit")
	err := func() error {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		tmp, err := os.CreateTemp(dir, ".corral-netinit-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		_, err = io.Copy(tmp, in)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// 0755, as installed: when Corral runs as root, the sandbox's
			// first program runs as an unprivileged uid (core/execbox).
			err = os.Chmod(tmp.Name(), 0o755)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		return err
	}()
	if err != nil {
		log.Warn("corral-netinit is used where it is installed: a package upgrade or removal while Corral runs may stop commands until Corral restarts", "path", src, "err", err)
		return src
	}
	return dst
}

// Open loads the config (writing the default when missing), makes the
// secrets, opens the database and wires every part.
func Open(o Options) (*Daemon, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	files := o.Files
	cfg, err := config.Load(files.Config, home, files.Sandbox)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckRoots(files); err != nil {
		return nil, err
	}
	owner, err := config.EnsureOwnerToken(files.OwnerToken)
	if err != nil {
		return nil, err
	}
	lock, err := acquire(files)
	if err != nil {
		return nil, err
	}
	removeTemps(files, log)
	st, err := store.Open(files.DB, store.Options{Logger: log, Clock: o.Clock})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open database %s: %w", files.DB, err)
	}
	netinit := o.NetInit
	if netinit == "" {
		netinit = keepNetInit(NetInitPath(), filepath.Dir(LockFile(files)), log)
	}
	p, err := wiring.Build(wiring.Setup{
		Config: cfg, Files: files, Store: st, Home: home,
		NetInit: netinit, DocReader: o.DocReader, Clock: o.Clock, Logger: log,
	})
	if err != nil {
		st.Close()
		lock.Close()
		return nil, err
	}
	// app/server's test harness builds its server the same way.
	srv := server.New(server.Config{
		Config: cfg, Files: files, Sandbox: p.Box, Links: p.Links, Undo: p.Undo, Commands: p.Commands, Patches: p.Patches, Documents: p.Documents, RotateLinks: p.RotateLinks, OnPause: p.OnPause,
		Audit: st, Devices: st, Sessions: st, Agents: st, LANCertFile: files.LANCert(),
		OwnerToken: owner, Home: home, Version: o.Version, Clock: o.Clock, Logger: log,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = srv.LoadAgents(ctx)
	cancel()
	if err != nil {
		p.Box.Close()
		st.Close()
		lock.Close()
		return nil, fmt.Errorf("agents and people in the database: %w", err)
	}
	// Before serving: finish what a crash interrupted (sandbox.Recover).
	// A failure is logged and Corral starts all the same; the next start
	// tries again.
	if _, err := p.Box.Recover(context.Background(), p.Undo.RollBack); err != nil {
		log.Error("recovery at start-up incomplete", "err", err)
	}
	return &Daemon{Files: files, Config: cfg, Store: st, Policy: p.Policy, Box: p.Box, Undo: p.Undo, Commands: p.Commands, Server: srv, Log: log, lock: lock, now: now(o.Clock), home: home}, nil
}

// removeTemps removes the temporary copies of config.toml, the secret
// and the owner's token that a kill between their write and their rename
// left (config.WriteAtomic); the lock makes the folders this daemon's.
func removeTemps(files config.Files, log *slog.Logger) {
	start := time.Now()
	seen := map[string]bool{}
	for _, f := range []string{files.Config, files.Secret, files.OwnerToken} {
		if dir := filepath.Dir(f); f != "" && !seen[dir] {
			seen[dir] = true
			if n := config.RemoveTemps(dir, start); n > 0 {
				log.Info("removed temporary files a crash left", "folder", dir, "files", n)
			}
		}
	}
}

// now is clock, or time.Now when it is nil.
func now(clock func() time.Time) func() time.Time {
	if clock == nil {
		return time.Now
	}
	return clock
}

// Close releases everything; the audit writer is flushed.
func (d *Daemon) Close() error {
	d.Box.Close()
	err := d.Store.Close()
	d.lock.Truncate(0) // no URL for a daemon that is gone
	d.lock.Close()
	return err
}

// prune applies the audit retention now and then daily until ctx ends.
func (d *Daemon) prune(ctx context.Context) {
	for {
		before := d.now().Add(-d.Config.Audit.Retention.D())
		if n, err := d.Store.Prune(ctx, before); err != nil {
			if ctx.Err() == nil {
				d.Log.Error("audit retention", "err", err)
			}
		} else if n > 0 {
			d.Log.Info("audit retention", "deleted", n)
		}
		if vs := d.Box.Versions(); vs != nil {
			vs.Prune()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(24 * time.Hour):
		}
	}
}

// Run listens on listen (the config's address when empty), calls ready
// with the server once it accepts connections, and serves until ctx ends;
// then it drains in-flight calls for up to 10 s.
func (d *Daemon) Run(ctx context.Context, listen string, ready func(*server.Server)) error {
	ln, err := d.Server.Listen(listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	lns := []net.Listener{ln}
	if d.Config.Server.LAN {
		lan, err := d.Server.ListenLAN()
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen on the LAN ([server] lan = true): %w", err)
		}
		lns = append(lns, lan)
	}
	go d.prune(ctx)
	go d.watchConfig(ctx)
	if err := d.lock.Truncate(0); err == nil {
		d.lock.WriteAt([]byte(d.Server.LocalURL()+"\n"), 0)
	}
	if ready != nil {
		ready(d.Server)
	}
	return d.Server.Serve(ctx, 10*time.Second, lns...)
}
