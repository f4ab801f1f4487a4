package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/config"
	"corral/app/egress"
	"corral/app/testhost"
	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
	"corral/store"
)

const (
	ownerToken   = "owner-token-0123456789abcdef"
	aliceKey     = "alice-key-0123456789abcdef"
	bobKey       = "bob-key-0123456789abcdef01"
	companionKey = "companion-key-0123456789ab"
	multiKey     = "multi-key-0123456789abcdef"
)

const testConfig = `
[server]
listen = "127.0.0.1:0"
max_message_bytes = 65536

[[users]]
id = "alice"
[[users]]
id = "bob"

[[clients]]
name = "alice-agent"
key = "` + aliceKey + `"
user = "alice"

[[clients]]
name = "bob-agent"
key = "` + bobKey + `"
user = "bob"

[[clients]]
name = "companion-app"
key = "` + companionKey + `"
user = "companion"

[[clients]]
name = "multi-agent"
key = "` + multiKey + `"
user = "default"
act_for = ["alice", "companion"]
`

// corralCommand is the corral program the connect snippets name; a test
// that starts it builds it first (agents_test.go).
var corralCommand = "/usr/bin/corral"

// harness is a real server on a loopback port with a real SQLite store.
type harness struct {
	t      testing.TB
	dir    string
	base   string // sandbox base
	url    string
	srv    *Server
	clock  *testClock
	store  *store.Store
	box    *sandbox.Sandbox
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, extra string) *harness {
	t.Helper()
	return startIn(t, t.TempDir(), extra)
}

// testClock is one harness's adjustable time: real time plus an offset
// the test sets. Each harness has its own, so tests that move time can run
// in parallel.
type testClock struct{ offset atomic.Int64 }

// Now is the clock the server and sandbox read.
func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Shift sets the clock d away from real time (0 goes back to real time).
func (c *testClock) Shift(d time.Duration) { c.offset.Store(int64(d)) }

// harnessListen is where the next harness listens; "" is the config's
// 127.0.0.1:0. A restart test sets it to the first server's address, so
// the browser's tab (its origin) finds the second.
var harnessListen string

// startIn starts a server whose files live in dir (reused across restarts).
func startIn(t testing.TB, dir, extra string) *harness {
	t.Helper()
	return startNet(t, dir, extra, nil)
}

// startNet is startIn with the names a command's connections resolve
// through r. Nil resolves nothing: no test ever asks a real DNS server.
func startNet(t testing.TB, dir, extra string, r netgate.Resolver) *harness {
	t.Helper()
	return startAt(t, dir, extra, r, 0)
}

// startAt is startNet with the harness's clock shift away from real time
// from the start (a restart "later").
func startAt(t testing.TB, dir, extra string, r netgate.Resolver, shift time.Duration) *harness {
	t.Helper()
	if r == nil {
		r = testhost.Resolver{}
	}
	base := filepath.Join(dir, "sandbox")
	text := testConfig + extra
	if rest, ok := strings.CutPrefix(extra, "[server]\n"); ok { // more keys for the [server] table
		text = strings.Replace(testConfig, "[server]\n", "[server]\n"+rest, 1)
	}
	cfg, err := config.Parse(filepath.Join(dir, "config.toml"), []byte(text), dir, base)
	if err != nil {
		t.Fatal(err)
	}
	clock := new(testClock)
	clock.Shift(shift)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	st, err := store.Open(filepath.Join(dir, "corral.db"), store.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(context.Background(), policy.Config{Rules: st, Audit: st, Timeout: cfg.Sandbox.ApprovalTimeout.D(), Strict: cfg.Sandbox.Strict, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	vc := versions.Config{Dir: filepath.Join(dir, "versions")}
	if !cfg.Versions.Enabled {
		vc.Dir = ""
	}
	secret, err := config.EnsureSecret(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	runner, err := execbox.NewRunner(execbox.Options{Hidden: []string{dir + "/corral.db", filepath.Join(dir, "versions")}, Logger: log, NetInit: execboxtest.NetInit(t),
		Limits: execbox.Limits{Total: cfg.Exec.MaxMemoryMB << 20}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := netgate.New(netgate.Config{Policy: pol, Audit: st, Resolver: r, Logger: log,
		AllowPrivate: cfg.Exec.AllowPrivate, MaxConns: cfg.Exec.MaxConnections, MaxUpload: cfg.Exec.MaxUploadMB << 20})
	if err != nil {
		t.Fatal(err)
	}
	box, err := sandbox.Open(sandbox.Config{Layout: cfg.Layout(dir), Users: cfg.UserIDs(), Audit: st, Policy: pol, Logger: log, Clock: clock.Now,
		Versions: vc, History: st, Quota: cfg.Sandbox.QuotaMB << 20,
		Links: sandbox.LinkConfig{Secret: secret, Expiry: cfg.Links.Expiry.D(), MaxExpiry: cfg.Links.MaxExpiry.D(), SaveResultMaxKB: cfg.Links.SaveResultMaxKB},
		Exec: sandbox.ExecConfig{Runner: runner, Enabled: cfg.Exec.Enabled, Ask: cfg.Exec.Ask, Timeout: cfg.Exec.Timeout.D(), MaxOutput: cfg.Exec.MaxOutputKB << 10,
			MaxRunning: cfg.Exec.MaxRunning, MaxPerClient: cfg.Exec.MaxRunningPerAgent, QueueWait: cfg.Exec.QueueWait.D(),
			Gate: gate, Proxy: func(ctx context.Context, c net.Conn, d netgate.Dialer) {
				egress.Serve(ctx, c, d, egress.Options{Logger: log})
			}}})
	if err != nil {
		t.Fatal(err)
	}
	rotate := func(ctx context.Context, by string) error {
		fresh, err := config.RotateSecret(filepath.Join(dir, "secret.key"))
		if err != nil {
			return err
		}
		return box.RotateLinks(ctx, fresh, by)
	}
	srv := New(Options{Config: cfg, Sandbox: box, Audit: st, OwnerToken: ownerToken, Logger: log, RotateLinks: rotate, Devices: st, Sessions: st, Clock: clock.Now,
		Agents: st, Home: filepath.Join(dir, "home"), CorralCommand: corralCommand,
		OnPause: func(p bool) {
			if p {
				box.StopCommands()
			}
		}})
	if err := srv.LoadAgents(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(harnessListen)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, dir: dir, base: base, url: srv.LocalURL(), srv: srv, clock: clock, store: st, box: box, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- srv.Serve(ctx, 5*time.Second, ln) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	if err := <-h.done; err != nil && err != http.ErrServerClosed {
		h.t.Errorf("serve: %v", err)
	}
	h.box.Close()
	if err := h.store.Close(); err != nil {
		h.t.Errorf("close store: %v", err)
	}
}

func (h *harness) dial(key string) *client.Client {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, h.url, key)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// call makes a call that must succeed and decodes its result.
func rpcCall[T any](t testing.TB, c *client.Client, method string, params any) T {
	t.Helper()
	var v T
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.CallInto(ctx, method, params, &v); err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	return v
}

// callErr makes a call that must fail and returns its error.
func callErr(t testing.TB, c *client.Client, method string, params any) *client.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err == nil {
		t.Fatalf("%s %v: succeeded with %s, want an error", method, params, raw)
	}
	ce, ok := err.(*client.Error)
	if !ok {
		t.Fatalf("%s %v: %v (not a JSON-RPC error)", method, params, err)
	}
	return ce
}

func m(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return out
}
