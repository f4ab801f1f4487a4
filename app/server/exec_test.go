package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/testkit/poll"
)

func TestCommandRun(t *testing.T) {
	t.Parallel()
	h := start(t, "[exec]\nmax_output_kb = 64\ntimeout = \"3s\"\n")
	alice := h.dial(aliceKey)
	info := rpcCall[map[string]any](t, alice, "session.info", nil)
	ex := info["exec"].(map[string]any)
	if ex["available"] != true || !strings.HasPrefix(ex["sandbox"].(string), "bubblewrap ") {
		t.Fatalf("session.info.exec: %v", ex)
	}
	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo hello; echo oops >&2; pwd; exit 3"))
	if r.ExitCode != 3 || !strings.HasPrefix(r.Stdout, "hello\n") || r.Stderr != "oops\n" || r.Signal != nil || r.TimedOut {
		t.Fatalf("run: %+v", r)
	}
	home := strings.TrimSpace(strings.TrimPrefix(r.Stdout, "hello\n"))
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo made by a command > out.txt; ls -d playground share; cd playground && pwd", "working_dir", ""))
	if !strings.Contains(r.Stdout, "playground\nshare\n") || strings.TrimSpace(strings.Split(r.Stdout, "\n")[2]) != home+"/playground" {
		t.Fatalf("home layout: %+v", r)
	}
	if got := rpcCall[map[string]any](t, alice, "file.read", m("path", "out.txt")); got["content"] != "made by a command\n" {
		t.Errorf("file written by the command: %v", got)
	}
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "pwd", "working_dir", "playground"))
	if strings.TrimSpace(r.Stdout) != home+"/playground" {
		t.Errorf("working_dir playground: %+v", r)
	}
	ce := callErr(t, alice, "command.run", m("command", "pwd", "working_dir", "nope/deeper"))
	if ce.Code != -32602 || ce.Message != "Working directory does not exist: nope/deeper" {
		t.Errorf("missing working_dir: %+v", ce)
	}
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo $SECRET_OF_THE_DAEMON-$EXTRA; cat", "env", m("EXTRA", "given"), "stdin", "fed"))
	if r.Stdout != "-given\nfed" {
		t.Errorf("env and stdin: %q", r.Stdout)
	}
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "head -c 200000 /dev/zero | tr '\\0' x"))
	if !r.Truncated || len(r.Stdout) != 64<<10 {
		t.Errorf("truncation: %v %d", r.Truncated, len(r.Stdout))
	}
	start := time.Now()
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "sleep 30 & sleep 30", "timeout_ms", 1000))
	if !r.TimedOut || r.Signal == nil || *r.Signal != "SIGKILL" || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %+v after %v", r, time.Since(start))
	}
	// [exec] timeout is also the longest an agent may ask for.
	start = time.Now()
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "sleep 30", "timeout_ms", 60_000))
	if !r.TimedOut || time.Since(start) > 15*time.Second {
		t.Errorf("60 s asked under [exec] timeout = 3s: %+v after %v", r, time.Since(start))
	}
	r = rpcCall[wire.RunResult](t, alice, "command.run", m("command", "touch /usr/x"))
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Read-only file system") {
		t.Errorf("write /usr: %+v", r)
	}
}

func TestCommandStreamCancelAndList(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, owner := h.dial(aliceKey), h.dial(ownerToken)
	// Streamed output arrives before the result.
	done := make(chan wire.RunResult, 1)
	go func() {
		done <- rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo one; sleep 1; echo two >&2; sleep 1; echo three", "stream", true))
	}()
	var chunks []string
	deadline := time.After(time.Minute)
	for len(chunks) < 3 {
		select {
		case n := <-alice.Notifications():
			var p struct {
				RequestID json.RawMessage `json:"request_id"`
				Stream    string
				Data      string
			}
			json.Unmarshal(n.Params, &p)
			if n.Method != "command.output" || len(p.RequestID) == 0 {
				t.Fatalf("notification %s %s", n.Method, n.Params)
			}
			chunks = append(chunks, p.Stream+":"+strings.TrimSpace(p.Data))
		case r := <-done:
			t.Fatalf("result before all chunks (%v): %+v", chunks, r)
		case <-deadline:
			t.Fatal("no output notifications")
		}
	}
	if strings.Join(chunks, ",") != "stdout:one,stderr:two,stdout:three" {
		t.Errorf("chunks: %v", chunks)
	}
	<-done

	// A long command shows in command.list and stops on cancel.
	ctx := context.Background()
	go alice.Call(ctx, "command.run", m("command", "sleep 60"))
	var running struct{ Running []wire.Running }
	waitFor(t, "the command in command.list", func() bool {
		running = rpcCall[struct{ Running []wire.Running }](t, owner, "command.list", nil)
		return len(running.Running) != 0
	})
	if len(running.Running) != 1 || running.Running[0].Client != "alice-agent" || running.Running[0].Command != "sleep 60" {
		t.Fatalf("command.list: %+v", running)
	}
	bob := h.dial(bobKey)
	if res := rpcCall[map[string]bool](t, bob, "command.cancel", m("request_id", json.RawMessage(running.Running[0].RequestID))); res["cancelled"] {
		t.Error("bob cancelled alice's command")
	}
	if res := rpcCall[map[string]bool](t, owner, "command.cancel", m("request_id", json.RawMessage(running.Running[0].RequestID))); !res["cancelled"] {
		t.Errorf("owner cancel: %v", res)
	}
	// agents.pause stops running commands and refuses new ones.
	go alice.Call(ctx, "command.run", m("command", "sleep 60"))
	listed := func() int {
		return len(rpcCall[struct{ Running []wire.Running }](t, owner, "command.list", nil).Running)
	}
	waitFor(t, "the second command in command.list", func() bool { return listed() == 1 })
	rpcCall[any](t, owner, "agents.pause", nil)
	waitFor(t, "agents.pause to stop the running command", func() bool { return listed() == 0 })
	if ce := callErr(t, alice, "command.run", m("command", "true")); ce.Data.Kind != "denied" {
		t.Errorf("command while paused: %+v", ce)
	}
}

func TestCommandNetworkAskedEveryTime(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("cat /proc/net/dev | grep -c : ; exec 3<>/dev/tcp/127.0.0.1/%d 2>/dev/null && echo connected || echo refused", port)
	connect = "bash -c '" + connect + "'"
	alice := h.dial(aliceKey)
	// Without network: only lo, no connection.
	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", connect))
	if !strings.Contains(r.Stdout, "refused") || !strings.HasPrefix(r.Stdout, "1\n") {
		t.Fatalf("no network: %+v", r)
	}
	// network: true with nobody to ask (strict): denied, never ran.
	if ce := callErr(t, alice, "command.run", m("command", connect, "network", true)); ce.Data.Kind != "denied" {
		t.Fatalf("network without an owner: %+v", ce)
	}
	own := h.owner(t)
	for i, decision := range []string{"allow_once", "deny_once", "allow_once"} {
		done := async(alice, "command.run", m("command", connect, "network", true, "reason", "fetch a page"))
		a := own.requested()
		if a.Access != "network" || !a.OneTimeOnly || a.Target != connect {
			t.Fatalf("approval %d: %+v", i, a)
		}
		if ce := callErr(t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_always")); ce.Code != -32602 {
			t.Errorf("allow_always on network: %+v", ce)
		}
		rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", decision))
		err := <-done
		if decision == "deny_once" {
			if err == nil {
				t.Errorf("denied network ran")
			}
			continue
		}
		if err != nil {
			t.Fatalf("allowed network: %v", err)
		}
	}
	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "command.run", "decision", "allow"))
	if len(ev.Events) < 3 || !strings.Contains(ev.Events[0].Detail, "network allowed") {
		t.Errorf("audit: %+v", ev.Events)
	}
	// The approved run has network only through Corral's proxy: the
	// host's loopback stays out of reach, directly and through the proxy.
	done := make(chan wire.RunResult, 1)
	viaProxy := fmt.Sprintf(`%s; curl -s -o /dev/null -w "proxy:%%{http_code}\n" http://127.0.0.1:%d/`, connect, port)
	go func() {
		done <- rpcCall[wire.RunResult](t, alice, "command.run", m("command", viaProxy, "network", true))
	}()
	a := own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	r = <-done
	if !strings.Contains(r.Stdout, "refused") || !strings.Contains(r.Stdout, "proxy:403") || !strings.HasPrefix(r.Stdout, "1\n") {
		t.Errorf("allowed network reached the host's loopback: %+v", r)
	}
	if r.Network == nil || len(r.Network.Refused) != 1 || !strings.Contains(r.Network.Refused[0].Reason, "this computer itself") ||
		!strings.Contains(r.Stderr, "corral: Corral refused 127.0.0.1:") {
		t.Errorf("the refusal is not explained: %+v", r)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host listener accepted %d connections", n)
	}
}

func TestExecAsk(t *testing.T) {
	t.Parallel()
	h := start(t, "[exec]\nask = true\n")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	done := make(chan wire.RunResult, 1)
	go func() { done <- rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo asked")) }()
	a := own.requested()
	if a.Access != "execute" || !a.OneTimeOnly || a.Target != "echo asked" {
		t.Fatalf("approval: %+v", a)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	if r := <-done; r.Stdout != "asked\n" {
		t.Errorf("run: %+v", r)
	}
}

// With [exec] ask, the owner sees the input and environment too: a plain
// "sh" fed a script is not what it looks like.
func TestExecAskShowsInputAndEnv(t *testing.T) {
	t.Parallel()
	h := start(t, "[exec]\nask = true\n")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	done := async(alice, "command.run", m("command", "sh", "stdin", "echo PAYLOAD; id", "env", m("X", "y")))
	a := own.requested()
	if !strings.HasPrefix(a.Target, "sh\n") || !strings.Contains(a.Target, `echo PAYLOAD; id`) || !strings.Contains(a.Target, `X="y"`) {
		t.Fatalf("question: %q", a.Target)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	if err := <-done; err == nil {
		t.Fatal("denied command ran")
	}
}

func TestCommandWithHiddenCharactersIsRefused(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	for _, cmd := range []string{"echo safe \u202e; rm -rf ~", "echo \u200bx", "echo \x1b[2Jhidden"} {
		if ce := callErr(t, alice, "command.run", m("command", cmd)); ce.Code != -32602 {
			t.Errorf("%q: %+v", cmd, ce)
		}
	}
	if r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "printf 'a\\tb\\n'")); r.Stdout != "a\tb\n" {
		t.Errorf("tab and newline: %q", r.Stdout)
	}
}

// TestCommandLimits: an agent at its limit of commands running at once
// waits, then is refused with a sentence; another agent is not held up;
// session.info says what the limits are.
func TestCommandLimits(t *testing.T) {
	t.Parallel()
	h := start(t, "[exec]\nmax_running_per_agent = 1\nqueue_wait = \"1s\"\n")
	alice, bob := h.dial(aliceKey), h.dial(bobKey)
	owner := h.dial(ownerToken)
	first := async(alice, "command.run", m("command", "sleep 30"))
	poll.Eventually(t, callWithin, func() bool {
		return len(rpcCall[struct{ Running []wire.Running }](t, owner, "command.list", nil).Running) > 0
	}, "the first command to start")
	ce := callErr(t, alice, "command.run", m("command", "true"))
	if ce.Data.Kind != "unavailable" || !strings.Contains(ce.Message, "alice-agent already runs 1 commands at once") {
		t.Errorf("over the limit: %+v", ce)
	}
	if r := rpcCall[wire.RunResult](t, bob, "command.run", m("command", "echo bob")); r.Stdout != "bob\n" {
		t.Errorf("another agent: %+v", r)
	}
	ex := rpcCall[map[string]any](t, alice, "session.info", nil)["exec"].(map[string]any)
	if !strings.Contains(ex["running"].(string), "1 per agent") || ex["memory"] == "" {
		t.Errorf("session.info.exec: %v", ex)
	}
	rpcCall[any](t, owner, "agents.pause", nil)
	<-first
}

// TestQuotaStopsCommands: a command may push its folder past the quota;
// the next command and the next write are refused with a sentence.
func TestQuotaStopsCommands(t *testing.T) {
	t.Parallel()
	h := start(t, "[sandbox]\nquota_mb = 1\n")
	alice := h.dial(aliceKey)
	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "head -c 2000000 /dev/zero > big && echo wrote"))
	if r.Stdout != "wrote\n" {
		t.Fatalf("%+v", r)
	}
	for _, call := range []struct {
		method string
		params map[string]any
	}{{"command.run", m("command", "true")}, {"file.write", m("path", "x.txt", "content", "x")}} {
		ce := callErr(t, alice, call.method, call.params)
		if ce.Data.Kind != "too_large" || !strings.Contains(ce.Message, "reached its quota of 1.0 MiB") {
			t.Errorf("%s over the quota: %+v", call.method, ce)
		}
	}
	rpcCall[any](t, alice, "file.delete", m("path", "big"))
	rpcCall[any](t, alice, "file.write", m("path", "x.txt", "content", "room again"))
}
