package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildCorral builds the real binary once per test run.
func buildCorral(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "corral")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestServeHeadlessEndToEnd starts `corral serve --headless` in a fresh
// CORRAL_HOME, as a new user would, and drives it with `corral call`.
func TestServeHeadlessEndToEnd(t *testing.T) {
	bin := buildCorral(t)
	home := t.TempDir()
	env := append(os.Environ(), "CORRAL_HOME="+home, "SECRET_OF_THE_DAEMON=do-not-leak")
	cmd := exec.Command(bin, "serve", "--headless", "--listen", "127.0.0.1:0")
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
	}
	if len(got) < 2 {
		t.Fatalf("start-up lines: %v\nstderr: %s", got, stderr.String())
	}
	listen := regexp.MustCompile(`^corral: listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(got[0])
	if listen == nil || !regexp.MustCompile(`^corral: dashboard http://127\.0\.0\.1:\d+/login\?code=[A-Za-z0-9_-]{20,}$`).MatchString(got[1]) {
		t.Fatalf("start-up lines: %q", got)
	}
	go io.Copy(io.Discard, stdout)
	url := listen[1]

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
	cfg, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	key := regexp.MustCompile(`(?m)^key = "([^"]+)"`).FindSubmatch(cfg)
	if key == nil {
		t.Fatalf("no agent key in the default config:\n%s", cfg)
	}
	call := func(key string, args ...string) (string, error) {
		c := exec.Command(bin, append([]string{"call"}, args...)...)
		c.Env = append(env, "CORRAL_URL="+url, "CORRAL_KEY="+key)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := call(string(key[1]), "file.write", `{"path":"notes/hello.txt","content":"hi\n"}`)
	if err != nil || !strings.Contains(out, `"bytes": 3`) {
		t.Fatalf("corral call file.write: %v %s", err, out)
	}
	out, err = call(string(key[1]), "file.read", `{"path":"../../owner.token"}`)
	if err == nil || !strings.Contains(out, "(denied)") {
		t.Fatalf("escape attempt: %v %s", err, out)
	}
	owner, _ := os.ReadFile(filepath.Join(home, "owner.token"))
	out, err = call(strings.TrimSpace(string(owner)), "audit.query", `{"op":"file.write"}`)
	var page struct{ Events []map[string]any }
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Events) != 1 {
		t.Fatalf("audit.query: %v %s", err, out)
	}

	// SIGTERM: clean exit, no panic.
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit 15 s after SIGTERM")
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestBadConfigStopsStartup(t *testing.T) {
	bin := buildCorral(t)
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
