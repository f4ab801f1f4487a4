package main

import (
	"context"
	"database/sql"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/app/client"
	"corral/core/testkit/needs"
)

// serveCmd starts `corral serve --headless --listen listen` from bin with
// env as its whole environment and stderr (nil: discarded), and returns
// it with its stdout, which the caller reads. It is the one starter of
// the daemon for the tests of this package: startServeIn, restartServe,
// startXDG and the fault tests' killStart and killAtWAL build on it. The
// caller kills and waits for it (a t.Cleanup, or watchServe's dead).
func serveCmd(t testing.TB, bin, listen string, env []string, stderr io.Writer) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--headless", "--listen", listen)
	cmd.Env = env
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout
}

// watchServe follows a daemon serveCmd started, for a test that kills it
// while it starts: serving is closed once the daemon writes its first
// byte on stdout (it says where it listens only once it serves), dead
// once it has exited (the one Wait of cmd). The rest of stdout is
// discarded.
func watchServe(cmd *exec.Cmd, stdout io.Reader) (serving, dead chan struct{}) {
	serving, dead = make(chan struct{}), make(chan struct{})
	go func() {
		b := make([]byte, 1)
		if n, _ := stdout.Read(b); n > 0 {
			close(serving)
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { cmd.Wait(); close(dead) }()
	return serving, dead
}

// stopTerm sends cmd SIGTERM and fails t unless it exits cleanly within
// the given time; stderr is the daemon's, for the message.
func stopTerm(t *testing.T, cmd *exec.Cmd, within time.Duration, stderr interface{ String() string }) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(within):
		t.Fatalf("no exit %v after SIGTERM", within)
	}
}

// kill SIGKILLs r's daemon and waits for it to exit.
func (r *running) kill() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// needsCommands runs `true` as agent, and skips or fails t (needs.Can)
// unless commands run in the sandbox (bubblewrap) here.
func needsCommands(ctx context.Context, t *testing.T, agent *client.Client) {
	t.Helper()
	_, err := agent.Call(ctx, "command.run", map[string]any{"command": "true"})
	needs.Can(t, "run a command in the sandbox (bubblewrap)", err)
}

// undoRig starts the daemon in a fresh home for a test of undo across
// kills: the default agent writes path with content, commands must run
// here (needsCommands), and scope is the agent's folder on disk, the one
// holding path's first element.
func undoRig(ctx context.Context, t *testing.T, path, content string) (home string, r *running, agent *client.Client, scope string) {
	t.Helper()
	home = t.TempDir()
	r = startServeIn(t, home)
	agent = dialAgent(ctx, t, r)
	if _, err := agent.Call(ctx, "file.write", map[string]any{"path": path, "content": content}); err != nil {
		t.Fatal(err)
	}
	needsCommands(ctx, t, agent)
	return home, r, agent, scopeFolder(t, home, strings.Split(path, "/")[0])
}

// lastEventInFile reads the newest audit event of op straight from the SQLite
// file db (read-only), as a crash test does after the daemon died.
func lastEventInFile(t *testing.T, db, op string) (id int64, detail, decision string) {
	t.Helper()
	sdb, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	sdb.QueryRow(`SELECT id, detail, decision FROM audit_events WHERE op = ? ORDER BY id DESC LIMIT 1`, op).Scan(&id, &detail, &decision)
	return id, detail, decision
}
