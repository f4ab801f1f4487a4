// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/core/execbox/execboxtest"
	"corral/core/testkit/poll"
)

// TestSecondStartOpensDashboard: `corral` (the tray app, as the menu entry
// starts it) while Corral runs opens the running one's dashboard with a
// fresh one-time login, through xdg-open as `corral open` does, and exits
// 0; `corral serve` exits 3 (the user unit's "do not restart"), saying
// where the running one is. Before, both exited 1 with a line on stderr.
func TestSecondStartOpensDashboard(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	// A desktop whose browser opener writes down what it was given.
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> "+opened+"\n"), 0o755)
	env := append(r.env[:len(r.env):len(r.env)], "PATH="+bin+":"+os.Getenv("PATH"), "DISPLAY=:77", "CORRAL_URL=", "CORRAL_KEY=")

	second := exec.Command(r.bin)
	second.Env = env
	out, err := second.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "already running at "+r.url) {
		t.Fatalf("second corral: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(opened)
	if !strings.HasPrefix(string(got), r.url+"/login?code=") || strings.Count(string(got), "\n") != 1 {
		t.Errorf("xdg-open was given %q, want one %s/login?code=… link", got, r.url)
	}

	serve := exec.Command(r.bin, "serve", "--headless", "--listen", "127.0.0.1:0")
	serve.Env = env
	out, err = serve.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRunning || !strings.Contains(string(out), "already running") {
		t.Errorf("second serve: %v (want exit status %d)\n%s", err, exitRunning, out)
	}
	// Neither started a daemon of its own: the first one still answers.
	c := exec.Command(r.bin, "call", "session.info")
	c.Env = env
	c.WaitDelay = 10 * time.Second
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), `"role": "owner"`) {
		t.Errorf("the first Corral after the second start: %v %s", err, b)
	}
}

// buildVersion builds corral with version v into dir/name.
func buildVersion(t *testing.T, dir, name, v string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if b, err := exec.Command("go", "build", "-ldflags", "-X main.version="+v, "-o", out, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestUpgradeRestartsInPlace: a daemon told SIGUSR1 (the package's
// postinst after an upgrade) stops cleanly and starts again from the
// program now at its path: the new version, the same process, the same
// files (its agents, their keys and the audit log carry over). Before,
// SIGUSR1 killed it.
func TestUpgradeRestartsInPlace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds corral twice")
	}
	dir := t.TempDir()
	bin := buildVersion(t, dir, "corral", "1.0.0-old")
	os.Symlink(execboxtest.NetInit(t), filepath.Join(dir, "corral-netinit"))
	home := t.TempDir()
	env := append(os.Environ(), "CORRAL_HOME="+home, "CORRAL_URL=", "CORRAL_KEY=")
	stderr := &strings.Builder{}
	cmd, stdout := serveCmd(t, bin, "127.0.0.1:0", env, stderr)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	listening := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`^corral: listening on (http://\S+)$`).FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	next := func() string {
		select {
		case u := <-listening:
			return u
		case <-time.After(60 * time.Second):
			t.Fatalf("no start-up line within 60 s; stderr:\n%s", stderr.String())
			return ""
		}
	}
	version := func() string {
		c := exec.Command(bin, "call", "session.info")
		c.Env = env
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("session.info: %v %s", err, b)
		}
		m := regexp.MustCompile(`"version": "([^"]*)"`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("session.info names no version: %s", b)
		}
		return string(m[1])
	}
	first := next()
	if v := version(); v != "1.0.0-old" {
		t.Fatalf("version before = %q", v)
	}
	// Something in the audit log to find afterwards.
	c := exec.Command(bin, "call", "file.write", `{"path":"notes/kept.txt","content":"kept"}`)
	c.Env = env
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("file.write: %v %s", err, b)
	}

	// The upgrade: the new program is renamed over the old, as dpkg does.
	buildVersion(t, dir, "corral.new", "1.0.1-new")
	if err := os.Rename(filepath.Join(dir, "corral.new"), bin); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	second := next()
	if v := version(); v != "1.0.1-new" {
		t.Errorf("version after SIGUSR1 = %q, want 1.0.1-new (first at %s, then %s)", v, first, second)
	}
	if cmd.ProcessState != nil {
		t.Fatal("the process ended")
	}
	c = exec.Command(bin, "audit", "--op", "file.write")
	c.Env = env
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), "notes/kept.txt") {
		t.Errorf("audit after the restart: %v %s", err, b)
	}
	stopTerm(t, cmd, 30*time.Second, stderr)
	if !strings.Contains(stderr.String(), "restarting into the installed program") {
		t.Errorf("no log line says why it restarted:\n%s", stderr.String())
	}
}

// TestTrayRestartsInPlace: the tray app (Fyne on a display, the daemon
// beside it) told SIGUSR1 closes its UI and daemon and starts again in the
// same process: a second set of start-up lines, the same PID answering,
// and a clean exit on SIGTERM after.
func TestTrayRestartsInPlace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Xvfb and the real binary; skipped under -short")
	}
	s := startTray(t, corralBinary(t), startXvfb(t), "")
	pid := s.cmd.Process.Pid
	s.cmd.Process.Signal(syscall.SIGUSR1)
	poll.EventuallyNil(t, time.Minute, func() error {
		if out := s.out.String(); strings.Count(out, "corral: listening on ") < 2 {
			return fmt.Errorf("output:\n%s", out)
		}
		return nil
	}, "a second start")
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("process %d after the restart: %v", pid, err)
	}
	c := exec.Command(s.bin, "call", "session.info")
	c.Env = s.env
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), `"role": "owner"`) {
		t.Errorf("after the restart: %v %s", err, b)
	}
	s.stop()
}
