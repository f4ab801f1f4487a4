package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"

	"corral/app/client"
)

// The fault test: the real daemon kills itself (SIGKILL, CORRAL_KILL_AT,
// core/killpoint) at a chosen moment of a change — a delete, a big
// append, a patch's staging and commit, a command's apply of 300 files —
// and is started again. Each time: the database passes integrity_check,
// no event is left "running" or "pending", the interrupted call's event
// says so, the files hold exactly their old content (the journal's rule
// is to roll back), no ".corral-tmp-" file is left anywhere, session.info
// says what was recovered, and earlier answered changes still undo.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	type tc struct {
		name, killAt string
		setup        func(t *testing.T, scope string) // the files, written directly
		call         func(ctx context.Context, c *client.Client) error
		command      bool
	}
	many := func(n int) func(t *testing.T, scope string) {
		return func(t *testing.T, scope string) {
			dir := filepath.Join(scope, "many")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				writeFile(t, filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("old %d\nline two\n", i))
			}
		}
	}
	patchOf := func(n int) string {
		var b strings.Builder
		b.WriteString("*** Begin Patch\n")
		for i := range n {
			fmt.Fprintf(&b, "*** Update File: many/f%03d.txt\n@@\n-old %d\n+new %d\n line two\n", i, i, i)
		}
		b.WriteString("*** Add File: many/added.txt\n+added\n*** End Patch\n")
		return b.String()
	}
	cases := []tc{
		{name: "delete", killAt: "change.after", setup: many(3), call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "file.delete", map[string]any{"path": "many", "recursive": true})
			return err
		}},
		{name: "append", killAt: "write.partial", setup: func(t *testing.T, scope string) {
			many(1)(t, scope)
			writeFile(t, filepath.Join(scope, "many", "big.log"), strings.Repeat("old log line\n", 80_000))
		}, call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "file.write", map[string]any{"path": "many/big.log", "content": strings.Repeat("appended line\n", 250_000), "append": true})
			return err
		}},
		{name: "append-landed", killAt: "change.after", setup: func(t *testing.T, scope string) {
			many(1)(t, scope)
			writeFile(t, filepath.Join(scope, "many", "big.log"), strings.Repeat("old log line\n", 1000))
		}, call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "file.write", map[string]any{"path": "many/big.log", "content": strings.Repeat("appended line\n", 250_000), "append": true})
			return err
		}},
		{name: "patch-staged", killAt: "patch.staged", setup: many(60), call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "file.apply_patch", map[string]any{"patch": patchOf(60)})
			return err
		}},
		{name: "patch-commit", killAt: "patch.commit:30", setup: many(60), call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "file.apply_patch", map[string]any{"patch": patchOf(60)})
			return err
		}},
		{name: "command-ended", killAt: "command.ended", command: true, setup: many(20), call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "command.run", map[string]any{"command": "for f in many/f*.txt; do echo more >> $f; done; mkdir made"})
			return err
		}},
		{name: "command-apply", killAt: "apply.file:150", command: true, setup: many(300), call: func(ctx context.Context, c *client.Client) error {
			_, err := c.Call(ctx, "command.run", map[string]any{"command": "for f in many/f*.txt; do echo more >> $f; done; rm many/f000.txt; mkdir -p made/deep; echo x > made/deep/x"})
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			r := startServeIn(t, home)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			agent := dialAgent(ctx, t, r)
			if c.command {
				needsCommands(ctx, t, agent)
			}
			// An answered change before the kill, to undo afterwards.
			if _, err := agent.Call(ctx, "file.write", map[string]any{"path": "before.txt", "content": "first\n"}); err != nil {
				t.Fatal(err)
			}
			if _, err := agent.Call(ctx, "file.write", map[string]any{"path": "before.txt", "content": "second\n"}); err != nil {
				t.Fatal(err)
			}
			scope := scopeFolder(t, home, "before.txt")
			c.setup(t, scope)
			orig := snapshot(t, scope)
			agent.Close()
			r.kill()

			// The run that dies.
			r = startServeIn(t, home, "CORRAL_KILL_AT="+c.killAt)
			agent = dialAgent(ctx, t, r)
			err := c.call(ctx, agent)
			if err == nil {
				t.Fatalf("the call was answered; the daemon should have died at %s", c.killAt)
			}
			r.cmd.Wait()
			if st, ok := r.cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !st.Signaled() {
				t.Fatalf("the daemon did not die of a signal: %v (%v)\n%s", r.cmd.ProcessState, err, r.stderr)
			}

			// Started again: everything is as it was.
			r = startServeIn(t, home)
			integrity(t, filepath.Join(home, "corral.db"))
			owner := dialKey(ctx, t, r, r.ownerKey)
			var page struct {
				Events []struct {
					ID       int64  `json:"id"`
					Op       string `json:"op"`
					Detail   string `json:"detail"`
					Decision string `json:"decision"`
					Error    string `json:"error"`
				} `json:"events"`
			}
			raw, err := owner.Call(ctx, "audit.query", map[string]any{"limit": 1000})
			if err != nil || json.Unmarshal(raw, &page) != nil {
				t.Fatalf("audit.query: %v %s", err, raw)
			}
			interrupted := 0
			var secondWrite int64
			for _, e := range page.Events {
				if strings.HasSuffix(e.Detail, "running") || strings.HasSuffix(e.Detail, "pending") {
					t.Errorf("event %d (%s) is still unfinished: %q", e.ID, e.Op, e.Detail)
				}
				if strings.Contains(e.Detail, "interrupted") {
					interrupted++
					if e.Decision != "error" || !strings.Contains(e.Error, "Corral stopped") {
						t.Errorf("interrupted event %d: %+v", e.ID, e)
					}
				}
				if e.Op == "file.write" && e.Decision == "allow" && secondWrite == 0 {
					secondWrite = e.ID
				}
			}
			if interrupted != 1 {
				t.Errorf("%d interrupted events, want 1: %+v", interrupted, page.Events)
			}
			sameSnapshot(t, orig, snapshot(t, scope))
			if left := temps(t, home); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			if ents, _ := os.ReadDir(filepath.Join(home, "versions", "run")); len(ents) > 0 {
				t.Errorf("command layers left: %d", len(ents))
			}
			raw, err = owner.Call(ctx, "session.info", nil)
			var info struct {
				Recovered *struct {
					Events int `json:"events"`
				} `json:"recovered"`
			}
			if err != nil || json.Unmarshal(raw, &info) != nil || info.Recovered == nil || info.Recovered.Events != 1 {
				t.Errorf("session.info.recovered: %v %s", err, raw)
			}
			// An answered change from before the crash still undoes.
			if _, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": secondWrite}); err != nil {
				t.Errorf("undo of event %d: %v", secondWrite, err)
			}
			if b, _ := os.ReadFile(filepath.Join(scope, "before.txt")); string(b) != "first\n" {
				t.Errorf("before.txt after the undo: %q", b)
			}
		})
	}
}

func dialAgent(ctx context.Context, t *testing.T, r *running) *client.Client {
	return dialKey(ctx, t, r, r.agentKey)
}

func dialKey(ctx context.Context, t *testing.T, r *running, key string) *client.Client {
	t.Helper()
	c, err := client.Dial(ctx, r.url, key)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scopeFolder finds the scope folder holding name, below home's sandbox.
func scopeFolder(t *testing.T, home, name string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(home, "sandbox", "*", name))
	if len(found) != 1 {
		t.Fatalf("%s in the sandbox: %v", name, found)
	}
	return filepath.Dir(found[0])
}

// snapshot maps every file, link and folder below dir to what it holds.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			out[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, want, got map[string]string) {
	t.Helper()
	bad := 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			if bad++; bad <= 5 {
				t.Errorf("%s: %d bytes (present %v), want %d bytes as before the crash", k, len(g), ok, len(v))
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			if bad++; bad <= 10 {
				t.Errorf("%s: there after the crash, not before", k)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d paths differ from before the interrupted call", bad)
	}
}

// temps lists Corral's temporary files below home.
func temps(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(home, "sandbox"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".corral-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// integrity runs PRAGMA integrity_check on the database at p.
func integrity(t *testing.T, p string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+p+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
}

// Four agents write, append to and delete their own files while the
// daemon kills itself at the 40th change: after the restart each file
// holds what its last answered call left, and every answered call has
// its event (allowed), the interrupted ones theirs (interrupted).
func TestCrashRecoveryConcurrent(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := startServeIn(t, home, "CORRAL_KILL_AT=change.after:40")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type state struct {
		content  map[string]*string // nil: deleted
		answered int
		// The call in flight when the daemon died: its event may have
		// been committed before the kill without the answer going out.
		flight     string
		flightNext *string
	}
	states := make([]*state, 4)
	done := make(chan int)
	for a := range states {
		st := &state{content: map[string]*string{}}
		states[a] = st
		c := dialAgent(ctx, t, r)
		go func() {
			defer func() { done <- a }()
			for i := 0; ; i++ {
				name := fmt.Sprintf("a%d-f%d.txt", a, i%3)
				cur := st.content[name]
				var err error
				var next *string
				switch {
				case i%7 == 6 && cur != nil:
					_, err = c.Call(ctx, "file.delete", map[string]any{"path": name})
				case i%5 == 4 && cur != nil:
					add := fmt.Sprintf("appended %d\n", i)
					_, err = c.Call(ctx, "file.write", map[string]any{"path": name, "content": add, "append": true})
					s := *cur + add
					next = &s
				default:
					s := fmt.Sprintf("agent %d call %d\n", a, i)
					_, err = c.Call(ctx, "file.write", map[string]any{"path": name, "content": s})
					next = &s
				}
				if err != nil {
					st.flight, st.flightNext = name, next // the daemon died
					return
				}
				st.content[name] = next
				st.answered++
			}
		}()
	}
	for range states {
		<-done
	}
	r.cmd.Wait()
	r = startServeIn(t, home)
	integrity(t, filepath.Join(home, "corral.db"))
	owner := dialKey(ctx, t, r, r.ownerKey)
	var page struct {
		Events []struct {
			Op       string `json:"op"`
			Detail   string `json:"detail"`
			Decision string `json:"decision"`
		} `json:"events"`
	}
	raw, err := owner.Call(ctx, "audit.query", map[string]any{"limit": 1000})
	if err != nil || json.Unmarshal(raw, &page) != nil {
		t.Fatalf("audit.query: %v %s", err, raw)
	}
	allowed, interrupted, answered := 0, 0, 0
	for _, e := range page.Events {
		switch {
		case strings.HasSuffix(e.Detail, "running") || strings.HasSuffix(e.Detail, "pending"):
			t.Errorf("unfinished event: %+v", e)
		case strings.Contains(e.Detail, "interrupted"):
			interrupted++
		case e.Decision == "allow" && (e.Op == "file.write" || e.Op == "file.delete"):
			allowed++
		}
	}
	var scope string
	unanswered := 0 // calls done and recorded whose answer the kill cut off
	for a, st := range states {
		answered += st.answered
		for name, want := range st.content {
			if scope == "" {
				found, _ := filepath.Glob(filepath.Join(home, "sandbox", "*", fmt.Sprintf("a%d-f*.txt", a)))
				if len(found) > 0 {
					scope = filepath.Dir(found[0])
				}
			}
			if scope == "" {
				t.Fatal("no agent files found")
			}
			b, err := os.ReadFile(filepath.Join(scope, name))
			if name == st.flight {
				next := st.flightNext
				if (next == nil && os.IsNotExist(err)) || (next != nil && err == nil && string(b) == *next) {
					if !(want == nil && next == nil) && !(want != nil && next != nil && *want == *next) {
						unanswered++
						continue
					}
				}
			}
			switch {
			case want == nil && !os.IsNotExist(err):
				t.Errorf("%s: deleted by an answered call, but there (%v)", name, err)
			case want != nil && string(b) != *want:
				t.Errorf("%s holds %q, want %q (its last answered call's)", name, b, *want)
			}
		}
	}
	if allowed != answered+unanswered || interrupted+unanswered < 1 || interrupted+unanswered > 4 {
		t.Errorf("%d answered successes and %d done but unanswered, %d allowed events; %d interrupted (1 to 4 calls were in flight)", answered, unanswered, allowed, interrupted)
	}
	if left := temps(t, home); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	t.Logf("%d answered calls, %d done but unanswered, %d interrupted", answered, unanswered, interrupted)
}
