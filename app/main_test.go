package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/core/execbox/execboxtest"
)

// running is a `corral serve --headless` process in a fresh CORRAL_HOME.
type running struct {
	bin, home, url, agentKey, ownerKey string
	env                                []string
	cmd                                *exec.Cmd
	stderr                             *strings.Builder
	lines                              []string
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// corralBinary builds the real binary, once for all the tests, with
// corral-netinit beside it as `make build` leaves them.
func corralBinary(t testing.TB) string {
	t.Helper()
	netinit := execboxtest.NetInit(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corral-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "corral")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		if err := os.Symlink(netinit, filepath.Join(dir, "corral-netinit")); err != nil {
			buildErr = err
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// startServeUnlimited is startServe with no bound on an agent's rate of
// calls (config's audit.agent_calls_per_second), for benchmarks that make
// b.N calls as fast as they can: the daemon is restarted with it lifted.
func startServeUnlimited(t testing.TB) *running {
	t.Helper()
	r := startServe(t)
	file := filepath.Join(r.home, "config.toml")
	cfg, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(cfg), "\n[audit]\n") {
		t.Fatalf("config.toml has no [audit] table: %v\n%s", err, cfg)
	}
	cfg = []byte(strings.Replace(string(cfg), "\n[audit]\n", "\n[audit]\nagent_calls_per_second = 1e12\nagent_call_burst = 1000000000\n", 1))
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	restartServe(t, r)
	return r
}

// startServe starts the daemon as a new user would, with no config: it
// writes its own. env adds to its environment (CORRAL_HOME there is
// the daemon's home instead of a fresh folder).
func startServe(t testing.TB, env ...string) *running {
	t.Helper()
	home := t.TempDir()
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "CORRAL_HOME="); ok {
			home = h
		}
	}
	return startServeIn(t, home, env...)
}

// startServeIn starts the daemon in home (a fresh one, or one a daemon
// ran in before) with extra environment variables.
func startServeIn(t testing.TB, home string, extra ...string) *running {
	t.Helper()
	r := &running{bin: corralBinary(t), home: home, stderr: &strings.Builder{}}
	r.env = append(os.Environ(), "CORRAL_HOME="+r.home, "SECRET_OF_THE_DAEMON=do-not-leak")
	r.env = append(r.env, extra...)
	var stdout io.Reader
	r.cmd, stdout = serveCmd(t, r.bin, "127.0.0.1:0", r.env, r.stderr)
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	for len(r.lines) < 4 && lines.Scan() {
		r.lines = append(r.lines, lines.Text())
	}
	if len(r.lines) < 2 {
		t.Fatalf("start-up lines: %v\nstderr: %s", r.lines, r.stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`^corral: listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(r.lines[0])
	if m == nil {
		t.Fatalf("start-up line: %q", r.lines[0])
	}
	r.url = m[1]
	cfg, _ := os.ReadFile(filepath.Join(r.home, "config.toml"))
	key := regexp.MustCompile(`(?m)^key = "([^"]+)"`).FindSubmatch(cfg)
	if key == nil {
		t.Fatalf("no agent key in the default config:\n%s", cfg)
	}
	owner, _ := os.ReadFile(filepath.Join(r.home, "owner.token"))
	r.agentKey, r.ownerKey = string(key[1]), strings.TrimSpace(string(owner))
	return r
}

// agentEnv is r's environment for a command that reaches it as the
// default config's agent (a fresh slice: r.env is shared).
func (r *running) agentEnv() []string {
	return r.envWith(r.agentKey)
}

// envWith is r's environment with CORRAL_URL set to r and CORRAL_KEY to key.
func (r *running) envWith(key string) []string {
	return slices.Concat(r.env, []string{"CORRAL_URL=" + r.url, "CORRAL_KEY=" + key})
}

// TestServeHeadlessEndToEnd starts `corral serve --headless` in a fresh
// CORRAL_HOME, as a new user would, and drives it with `corral call`.
func TestServeHeadlessEndToEnd(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	bin, home, env, url, cmd, stderr := r.bin, r.home, r.env, r.url, r.cmd, r.stderr
	if !regexp.MustCompile(`^corral: dashboard http://127\.0\.0\.1:\d+/login\?code=[A-Za-z0-9_-]{20,}$`).MatchString(r.lines[1]) {
		t.Fatalf("start-up lines: %q", r.lines)
	}
	if len(r.lines) < 4 || !strings.Contains(r.lines[3], filepath.Join(home, "config.toml")) || !strings.Contains(r.lines[3], "CORRAL_URL="+url) {
		t.Errorf("start-up lines do not say how to attach an agent: %q", r.lines)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()
	for _, f := range []string{"config.toml", "secret.key", "owner.token", "corral.db"} {
		st, err := os.Stat(filepath.Join(home, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f != "corral.db" && f != "config.toml" && st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", f, st.Mode())
		}
	}
	// The default config's agent key works.
	call := func(key string, args ...string) (string, error) {
		c := exec.Command(bin, append([]string{"call"}, args...)...)
		c.Env = r.envWith(key)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := call(r.agentKey, "file.write", `{"path":"notes/hello.txt","content":"hi\n"}`)
	if err != nil || !strings.Contains(out, `"bytes": 3`) {
		t.Fatalf("corral call file.write: %v %s", err, out)
	}
	out, err = call(r.agentKey, "file.read", `{"path":"../../owner.token"}`)
	if err == nil || !strings.Contains(out, "(denied)") {
		t.Fatalf("escape attempt: %v %s", err, out)
	}
	out, err = call(r.ownerKey, "audit.query", `{"op":"file.write"}`)
	var page struct{ Events []map[string]any }
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Events) != 1 {
		t.Fatalf("audit.query: %v %s", err, out)
	}

	// corral undo: an overwrite comes back, previewed first.
	if out, err := call(r.agentKey, "file.write", `{"path":"notes/hello.txt","content":"overwritten\n"}`); err != nil {
		t.Fatalf("overwrite: %v %s", err, out)
	}
	out, err = call(r.ownerKey, "audit.query", `{"op":"file.write","limit":1}`)
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Events) != 1 {
		t.Fatalf("audit.query: %v %s", err, out)
	}
	id := fmt.Sprint(page.Events[0]["id"])
	undo := exec.Command(bin, "undo", id, "--dry-run")
	undo.Env = env
	if b, err := undo.CombinedOutput(); err != nil || !strings.Contains(string(b), "-overwritten\n    +hi\n") {
		t.Errorf("corral undo --dry-run: %v %s", err, b)
	}
	found, _ := filepath.Glob(filepath.Join(home, "sandbox", "*", "notes", "hello.txt"))
	if len(found) != 1 {
		t.Fatalf("notes/hello.txt on disk: %v", found)
	}
	hello := found[0]
	if b, _ := os.ReadFile(hello); string(b) != "overwritten\n" {
		t.Errorf("a dry run changed the file: %q", b)
	}
	undo = exec.Command(bin, "undo", id)
	undo.Env = env
	if b, err := undo.CombinedOutput(); err != nil || !strings.Contains(string(b), "Undone") {
		t.Errorf("corral undo: %v %s", err, b)
	}
	if b, _ := os.ReadFile(hello); string(b) != "hi\n" {
		t.Errorf("after corral undo the file holds %q", b)
	}
	if fi, err := os.Stat(filepath.Join(home, "versions")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("version store folder: %v %v", fi, err)
	}

	// Without CORRAL_URL and CORRAL_KEY the CLI finds the daemon started
	// with --listen through its lock file, and acts as the owner.
	c := exec.Command(bin, "call", "session.info")
	c.Env = env
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), `"role": "owner"`) {
		t.Errorf("call without CORRAL_URL: %v %s", err, b)
	}
	// corral open without a desktop prints the fresh login link and says
	// why it could not open it.
	c = exec.Command(bin, "open")
	c.Env = slices.DeleteFunc(slices.Clone(env), func(v string) bool {
		return strings.HasPrefix(v, "DISPLAY=") || strings.HasPrefix(v, "WAYLAND_DISPLAY=")
	})
	if b, err := c.CombinedOutput(); err == nil || !strings.Contains(string(b), url+"/login?code=") || !strings.Contains(string(b), "no display") {
		t.Errorf("corral open without a display: %v %s", err, b)
	}
	// corral audit takes a duration for --since, and says when nothing
	// matches.
	for args, want := range map[string]string{"--since 1h --op file.write": "notes/hello.txt", "--user nobody": "(no events match)"} {
		c = exec.Command(bin, append([]string{"audit"}, strings.Fields(args)...)...)
		c.Env = env
		if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("corral audit %s: %v %s", args, err, b)
		}
	}
	// A wrong key is called a wrong key.
	if out, err := call("not-a-key", "session.info"); err == nil || !strings.Contains(out, "did not accept the key") {
		t.Errorf("wrong key: %v %s", err, out)
	}
	// A second daemon on the same files refuses to start, saying where
	// the first one is.
	second := exec.Command(bin, "serve", "--headless", "--listen", "127.0.0.1:0")
	second.Env = env
	if b, err := second.CombinedOutput(); err == nil || !strings.Contains(string(b), "already running") || !strings.Contains(string(b), url) {
		t.Errorf("second daemon: %v %s", err, b)
	}

	// SIGTERM: clean exit, no panic.
	stopTerm(t, cmd, 15*time.Second, stderr)
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestBadConfigStopsStartup(t *testing.T) {
	t.Parallel()
	bin := startServe(t).bin
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[[users]]\nid = \"a b\"\n"), 0o600)
	cmd := exec.Command(bin, "serve", "--headless")
	cmd.Env = append(os.Environ(), "CORRAL_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("started with a bad config")
	}
	if !strings.Contains(string(out), filepath.Join(home, "config.toml")+":2: users[0].id:") {
		t.Errorf("message: %s", out)
	}
}
