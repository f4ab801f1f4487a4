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
	"testing"
	"time"

	"corral/app/client"
	"corral/app/config"
	"corral/app/testhost"
	"corral/app/wiring"
	"corral/core/execbox/execboxtest"
	"corral/core/netgate"
	"corral/core/sandbox"
	"corral/core/testkit/fakeclock"
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

// unlimitedCalls lifts the bound on each agent's rate of calls, for
// benchmarks (and tests) that make many calls of one agent as fast as
// they can.
const unlimitedCalls = "\n[audit]\nagent_calls_per_second = 1e12\nagent_call_burst = 1000000000\n"

// corralCommand is the corral program the connect snippets name; a test
// that starts it builds it first (agents_test.go).
var corralCommand = "/usr/bin/corral"

// harness is a real server on a loopback port with a real SQLite store,
// its parts wired by wiring.Build as the daemon wires them.
type harness struct {
	t      testing.TB
	dir    string // the owner's home; Corral's own files are in files
	files  config.Files
	base   string // sandbox base
	url    string
	addr   string // host:port the server listens on
	srv    *Server
	clock  *fakeclock.Shifted // its own, so tests that move time can run in parallel
	store  *store.Store
	box    *sandbox.Sandbox
	cancel context.CancelFunc
	done   chan error
}

// setup says how a harness starts; the zero value is a fresh folder, the
// test config, the config's address 127.0.0.1:0 and real time.
type setup struct {
	dir   string // the owner's home, holding Corral's files; "": a fresh one
	extra string // config added to testConfig ("[server]\n…" adds to its [server] table)
	// resolver resolves the names a command's connections ask for; nil
	// resolves nothing: no test ever asks a real DNS server.
	resolver netgate.Resolver
	listen   string        // "": the config's; a restart passes the last server's addr
	shift    time.Duration // the clock starts this far from real time (a restart "later")
}

func start(t testing.TB, extra string) *harness {
	t.Helper()
	return startWith(t, setup{extra: extra})
}

// startIn starts a server whose files live in dir (reused across restarts).
func startIn(t testing.TB, dir, extra string) *harness {
	t.Helper()
	return startWith(t, setup{dir: dir, extra: extra})
}

// harnessFiles are where a harness in dir keeps Corral's own files: a
// folder of their own in the owner's home, as XDG places them.
func harnessFiles(dir string) config.Files {
	own := filepath.Join(dir, ".local", "share", "corral")
	return config.Files{
		Config: filepath.Join(own, "config.toml"), DB: filepath.Join(own, "corral.db"),
		Secret: filepath.Join(own, "secret.key"), OwnerToken: filepath.Join(own, "owner.token"),
		Sandbox: filepath.Join(dir, "sandbox"),
	}
}

// startWith starts a server as su says, wired by wiring.Build.
func startWith(t testing.TB, su setup) *harness {
	t.Helper()
	dir := su.dir
	if dir == "" {
		dir = t.TempDir()
	}
	r := su.resolver
	if r == nil {
		r = testhost.Resolver{}
	}
	files := harnessFiles(dir)
	if err := os.MkdirAll(filepath.Dir(files.DB), 0o700); err != nil {
		t.Fatal(err)
	}
	text := testConfig + su.extra
	if _, bench := t.(*testing.B); bench && !strings.Contains(su.extra, "[audit]") {
		text += unlimitedCalls // a benchmark's b.N calls are not refused
	}
	if rest, ok := strings.CutPrefix(su.extra, "[server]\n"); ok { // more keys for the [server] table
		text = strings.Replace(testConfig, "[server]\n", "[server]\n"+rest, 1)
	}
	if strings.Contains(su.extra, "max_message_bytes") { // the test's own bound
		text = strings.Replace(text, "max_message_bytes = 65536\n", "", 1)
	}
	cfg, err := config.Parse(files.Config, []byte(text), dir, files.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	clock := new(fakeclock.Shifted)
	clock.Shift(su.shift)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	st, err := store.Open(files.DB, store.Options{Logger: log, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	p, err := wiring.Build(wiring.Setup{
		Config: cfg, Files: files, Store: st, Home: dir, NetInit: execboxtest.NetInit(t),
		Resolver: r, Clock: clock.Now, Logger: log,
	})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	// As app/daemon's Open does.
	srv := New(Config{
		Config: cfg, Files: files, Sandbox: p.Box, Links: p.Links, Undo: p.Undo, Commands: p.Commands, Patches: p.Patches, Documents: p.Documents, RotateLinks: p.RotateLinks, OnPause: p.OnPause,
		Audit: st, Devices: st, Sessions: st, Agents: st, LANCertFile: files.LANCert(),
		OwnerToken: ownerToken, Home: dir, CorralCommand: corralCommand, Version: testVersion, Clock: clock.Now, Logger: log,
	})
	if err := srv.LoadAgents(context.Background()); err != nil {
		p.Box.Close()
		st.Close()
		t.Fatal(err)
	}
	// The LAN side, when a test opens it, is on a loopback address:
	// network tests talk only to loopback, never on the machine's network.
	srv.lanIP = func() (net.IP, error) { return net.IPv4(127, 0, 0, 2), nil }
	ln, err := srv.Listen(su.listen)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, dir: dir, files: files, base: cfg.Sandbox.Base, url: srv.LocalURL(), addr: ln.Addr().String(), srv: srv, clock: clock,
		store: st, box: p.Box, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- srv.Serve(ctx, 5*time.Second, ln) }()
	t.Cleanup(h.stop)
	return h
}

// restartSetup is how h starts again on the same files and address, as
// a daemon restart does: an open tab's origin stays the same.
func (h *harness) restartSetup() setup { return setup{dir: h.dir, listen: h.addr} }

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

// callWithin is how long the harness waits to connect or for a call's
// answer: long, for a loaded machine (a WebSocket handshake took over 5 s
// beside three busy loops on two cores); an answer that comes returns at
// once. Tests whose bound is the behaviour under test set their own.
const callWithin = 30 * time.Second

func (h *harness) dial(key string) *client.Client {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callWithin)
	defer cancel()
	c, err := client.Dial(ctx, h.url, key)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// startWithOutsideText is startWithOutsideFile (approvals_test.go) with
// a text file, outside/tax.txt beside the owner's home, that the
// dashboard's tests ask to read.
func startWithOutsideText(t *testing.T) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside", "tax.txt")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	return startIn(t, dir, ""), outside
}

// startAlice starts a server with the default config and returns it
// with alice-agent's and the owner's connections and alice's scope
// folder on disk: the start of most tests of changes and their undo.
func startAlice(t testing.TB) (h *harness, alice, own *client.Client, scope string) {
	t.Helper()
	h = start(t, "")
	return h, h.dial(aliceKey), h.dial(ownerToken), filepath.Join(h.base, "alice")
}

// call makes a call that must succeed and decodes its result.
func rpcCall[T any](t testing.TB, c *client.Client, method string, params any) T {
	t.Helper()
	var v T
	ctx, cancel := context.WithTimeout(context.Background(), callWithin)
	defer cancel()
	if err := c.CallInto(ctx, method, params, &v); err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	return v
}

// callErr makes a call that must fail and returns its error.
func callErr(t testing.TB, c *client.Client, method string, params any) *client.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callWithin)
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
