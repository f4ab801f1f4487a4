package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/app/client"
	"corral/core/testkit/poll"
)

// TestRestartWithCallsInFlight: the owner's corral.restart while an
// agent's calls are under way — a short command, a command longer than
// the drain, a question waiting for the owner, a 3 MB write. After
// the restart (same process id, re-executed: the lock file names the new
// address) every answered call has its event, with the decision its
// answer gave; no event is left running or pending; the long command's
// event says it was cancelled (or is an error) and its file is absent;
// the write is whole or absent (or never sent: the connection closed
// first; then it has no event); the new daemon serves.
func TestRestartWithCallsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the daemon with a command running")
	}
	t.Parallel()
	r := startServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	pid := r.cmd.Process.Pid
	db := filepath.Join(r.home, "corral.db")

	owner := dialKey(ctx, t, r, r.ownerKey)
	if _, err := owner.Call(ctx, "approval.subscribe", nil); err != nil {
		t.Fatal(err)
	}
	agent := dialAgent(ctx, t, r)
	needsCommands(ctx, t, agent)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, outside, "outside")

	type answer struct {
		name string
		res  json.RawMessage
		err  error
	}
	answers := make(chan answer, 3)
	async := func(name, method string, params map[string]any) {
		c, err := client.Dial(ctx, r.url, r.agentKey)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer c.Close()
			res, err := c.Call(ctx, method, params)
			answers <- answer{name, res, err}
		}()
	}
	big := strings.Repeat("0123456789abcdef", 1<<20/16)
	async("short", "command.run", map[string]any{"command": "sleep 2; echo done > short.txt"})
	async("long", "command.run", map[string]any{"command": "sleep 60; echo late > long.txt"})
	async("ask", "file.read", map[string]any{"path": outside})
	// The question is asked, and both commands run.
	for {
		n := <-owner.Notifications()
		if n.Method == "approval.requested" {
			break
		}
	}
	ro, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	poll.Eventually(t, 30*time.Second, func() bool {
		var n int
		ro.QueryRow(`SELECT count(*) FROM audit_events WHERE op = 'command.run' AND detail LIKE '%running'`).Scan(&n)
		return n == 2
	}, "both commands running")
	// Writes one after another until the restart cuts one off.
	type wres struct {
		name string
		err  error
	}
	var writes []wres
	wc, err := client.Dial(ctx, r.url, r.agentKey)
	if err != nil {
		t.Fatal(err)
	}
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		defer wc.Close()
		for i := 0; ; i++ {
			name := fmt.Sprintf("w%03d.txt", i)
			_, err := wc.Call(ctx, "file.write", map[string]any{"path": name, "content": big})
			writes = append(writes, wres{name, err})
			if err != nil {
				return
			}
		}
	}()
	poll.Eventually(t, 30*time.Second, func() bool {
		var n int
		ro.QueryRow(`SELECT count(*) FROM audit_events WHERE op = 'file.write'`).Scan(&n)
		return n >= 3
	}, "writes under way")
	if _, err := owner.Call(ctx, "corral.restart", nil); err != nil {
		t.Fatalf("corral.restart: %v", err)
	}

	got := map[string]answer{}
	<-wdone
	for range 3 {
		a := <-answers
		got[a.name] = a
		t.Logf("%s: %s %v", a.name, a.res, a.err)
	}

	// The same process, re-executed, serves at a new address.
	lock := filepath.Join(r.home, "corral.lock")
	var url string
	poll.Eventually(t, 60*time.Second, func() bool {
		b, _ := os.ReadFile(lock)
		url = strings.TrimSpace(string(b))
		return url != "" && url != r.url
	}, "the restarted daemon's address in corral.lock")
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("process %d gone after the restart: %v", pid, err)
	}
	r.url = url
	c := dialAgent(ctx, t, r)
	if _, err := c.Call(ctx, "file.write", map[string]any{"path": "after.txt", "content": "after"}); err != nil {
		t.Fatalf("the restarted daemon: %v", err)
	}

	// The log, as the new daemon left it after its recovery.
	events := map[string][]auditRow{}
	rows, err := ro.Query(`SELECT id, op, target, decision, detail, error FROM audit_events WHERE op IN ('command.run', 'file.read', 'file.write', 'corral.restart') ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e auditRow
		var op, target string
		rows.Scan(&e.ID, &op, &target, &e.Decision, &e.Detail, &e.Error)
		switch {
		case op == "command.run" && strings.Contains(target, "short.txt"):
			events["short"] = append(events["short"], e)
		case op == "command.run" && strings.Contains(target, "long.txt"):
			events["long"] = append(events["long"], e)
		case op == "file.read" && target == outside:
			events["ask"] = append(events["ask"], e)
		case op == "file.write":
			events[filepath.Base(target)] = append(events[filepath.Base(target)], e)
		case op == "corral.restart":
			events["restart"] = append(events["restart"], e)
		}
	}
	rows.Close()
	var unfinished int
	ro.QueryRow(`SELECT count(*) FROM audit_events WHERE substr(detail, -7) IN ('running', 'pending')`).Scan(&unfinished)
	if unfinished != 0 {
		t.Errorf("%d events left running or pending", unfinished)
	}
	if len(events["restart"]) != 1 {
		t.Errorf("corral.restart events: %+v", events["restart"])
	}
	for _, w := range writes {
		got[w.name] = answer{name: w.name, err: w.err}
	}
	t.Logf("%d writes, the last answered %v", len(writes), writes[len(writes)-1].err)
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if strings.HasPrefix(name, "w") {
			w := got[name]
			b, err := os.ReadFile(filepath.Join(scopeFolder(t, r.home, "after.txt"), name))
			if err == nil && string(b) != big {
				t.Errorf("%s holds %d bytes, want %d or none", name, len(b), len(big))
			}
			if w.err == nil && err != nil {
				t.Errorf("%s answered saved, and is absent: %v", name, err)
			}
		}
		a, evs := got[name], events[name]
		if !strings.HasPrefix(name, "w") || a.err != nil {
			t.Logf("%s events: %+v", name, evs)
		}
		if len(evs) == 0 && a.err != nil && (strings.Contains(a.err.Error(), "websocket") || strings.Contains(a.err.Error(), "write tcp")) {
			continue // never sent (whole): the connection closed first, or while the request was written (broken pipe)
		}
		if len(evs) != 1 {
			t.Errorf("%s: %d events, want 1: %+v", name, len(evs), evs)
			continue
		}
		if a.err == nil && evs[0].Decision != "allow" {
			t.Errorf("%s answered a success, its event is %s", name, evs[0].Decision)
		}
		if a.err != nil && evs[0].Decision == "allow" && evs[0].Error == "" && !strings.Contains(a.err.Error(), "connection") {
			t.Errorf("%s answered %v, its event says allowed with no error", name, a.err)
		}
	}
	scope := scopeFolder(t, r.home, "after.txt")
	var long struct{ Cancelled bool }
	json.Unmarshal(got["long"].res, &long)
	if got["long"].err == nil && !long.Cancelled {
		t.Errorf("the 60 s command answered a success across the restart: %s", got["long"].res)
	}
	if e := events["long"]; len(e) == 1 && e[0].Decision == "allow" && !strings.Contains(e[0].Detail, "cancelled") {
		t.Errorf("the cut-off command's event: %+v", e[0])
	}
	if _, err := os.Stat(filepath.Join(scope, "long.txt")); err == nil {
		t.Errorf("long.txt exists: the cut-off command's change was applied")
	}
	if _, err := os.Stat(filepath.Join(scope, "short.txt")); (err == nil) != (got["short"].err == nil) {
		t.Errorf("short.txt: %v, the command answered %v", err, got["short"].err)
	}
}
