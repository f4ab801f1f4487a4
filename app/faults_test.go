package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"corral/app/client"
)

// TestFaultRun is the black-box fault run of issue 31: the real daemon,
// several agents over WebSocket (one of them in a readwrite root, by its
// host path) writing, editing, appending (some of 3.5 MB), deleting,
// moving files and folders, patching (up to 300 files, adding, deleting
// and moving some) and running commands (up to 2,000 files, making
// folders), SIGKILLed at a kill point (CORRAL_KILL_AT) or at a random
// moment, and started again; now and then the restart is killed too
// (while Recover puts changes back: recover.change, or at random), and so
// are the owner's undos (undo.change). After each kill:
//
//   - the database passes integrity_check, and no event is left
//     "running" or "pending";
//   - each agent's folder is exactly what its answered calls left, with
//     the call in flight at the kill either wholly applied (then its
//     event is allowed) or not at all: nothing half-applied; Recover
//     left nothing as it was (recovered.left 0);
//   - each agent's allowed events are its answered successes, in order
//     (plus the one done when the kill cut off its answer);
//   - no ".corral-tmp-" file is left below the sandbox or the root, no
//     command layer;
//   - the owner's undo.apply of each agent's last change restores the
//     content before it; an undo killed half-way is whole or absent;
//   - the daemon's sandbox processes still alive 3 s after the kill are
//     counted (and killed); issue 31's point 6 is another branch's, so
//     they are logged, not failed.
//
// Short by default (6 rounds, 4 agents, about 30 s, including the
// issue's named cases: a 2,000-file command killed during its apply, a
// 300-file patch killed during staging and during commit). The long run:
//
//	CORRAL_LONG_FAULTS=1 go test -count=1 -run TestFaultRun -timeout 60m -v ./app/
//
// (CORRAL_FAULT_ROUNDS=N, CORRAL_FAULT_AGENTS=N and CORRAL_FAULT_SEED=N
// change its 24 rounds, 8 agents and seed; a failure names the seed to
// run again.)
func TestFaultRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault run takes half a minute")
	}
	t.Parallel()
	long := os.Getenv("CORRAL_LONG_FAULTS") != ""
	rounds, agents, mfiles := 6, 4, 40
	seed := uint64(time.Now().UnixNano())
	if long {
		rounds, agents, mfiles = 24, 8, 300
	}
	envInt := func(k string, v *int) {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
			*v = n
		}
	}
	envInt("CORRAL_FAULT_ROUNDS", &rounds)
	envInt("CORRAL_FAULT_AGENTS", &agents)
	if s, err := strconv.ParseUint(os.Getenv("CORRAL_FAULT_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (CORRAL_FAULT_SEED), %d rounds, %d agents", seed, rounds, agents)
	rng := rand.New(rand.NewPCG(seed, 31))

	home := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("[audit]\nagent_calls_per_second = 1e12\nagent_call_burst = 1000000000\n\n[[users]]\nid = \"root\"\nname = \"root\"\n")
	fa := make([]*fagent, agents)
	for i := range fa {
		fa[i] = &fagent{n: i, name: fmt.Sprintf("agent%d", i), key: fmt.Sprintf("fault-agent-%d-0123456789abcdef", i),
			model: fmodel{}, rng: rand.New(rand.NewPCG(seed+uint64(i)+1, 7)), mfiles: mfiles}
		fa[i].pre = fmt.Sprintf("a%d", i)
		if i == 0 {
			fa[i].mfiles = 300 // the named patch case
		}
		if i == agents-1 && i >= 2 {
			// The last agent works in a readwrite root, by its host path.
			rw := t.TempDir()
			fmt.Fprintf(&cfg, "\n[[sandbox.roots]]\npath = %q\naccess = \"readwrite\"\n", rw)
			fa[i].pre = filepath.Join(rw, fa[i].pre)
			fa[i].host = fa[i].pre
		}
		fmt.Fprintf(&cfg, "\n[[clients]]\nname = %q\nkey = %q\nuser = \"root\"\n", fa[i].name, fa[i].key)
	}
	writeFile(t, filepath.Join(home, "config.toml"), cfg.String())

	type spec struct {
		killAt  string // "" for a kill at a random moment
		special string // agent 0's call: "cmd2000" or "patch300"
		quiet   string // what the other agents leave out: "commands" or "patches"
	}
	specs := []spec{
		{},
		{killAt: "apply.file:1000", special: "cmd2000", quiet: "commands"},
		{killAt: "patch.staged", special: "patch300", quiet: "patches"},
		{killAt: "patch.commit:150", special: "patch300", quiet: "patches"},
		{killAt: "write.partial:3"},
		{},
	}
	for len(specs) < rounds {
		n := 1 + rng.IntN(40)
		points := []string{"", "", "", "change.before", "change.after", "write.partial", "patch.staged", "patch.commit", "apply.file", "command.ended"}
		p := points[rng.IntN(len(points))]
		switch p {
		case "":
			specs = append(specs, spec{})
		case "apply.file":
			specs = append(specs, spec{killAt: fmt.Sprintf("%s:%d", p, 1+rng.IntN(600))})
		case "patch.commit", "change.before", "change.after":
			specs = append(specs, spec{killAt: fmt.Sprintf("%s:%d", p, n*3)})
		default:
			specs = append(specs, spec{killAt: fmt.Sprintf("%s:%d", p, 1+n/8)})
		}
	}
	specs = specs[:rounds]

	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	var st fstats
	var scope string
	undosDone := 0
	commands := true
	for round, sp := range specs {
		var env []string
		if sp.killAt != "" {
			env = append(env, "CORRAL_KILL_AT="+sp.killAt)
		}
		r := startServeIn(t, home, env...)
		dead := make(chan struct{})
		go func() { r.cmd.Wait(); close(dead) }()
		procs := watchProcs(r.cmd.Process.Pid)
		if round == 0 {
			// Each agent's first file, answered; then its folders, written
			// by the owner directly.
			for _, a := range fa {
				c := dialKey(ctx, t, r, a.key)
				p := a.p("w0.txt")
				if _, err := c.Call(ctx, "file.write", map[string]any{"path": p, "content": "gen first\n"}); err != nil {
					t.Fatal(err)
				}
				a.model[p] = "gen first\n"
				a.allowed = append(a.allowed, "file.write")
				if a.n == 0 {
					if _, err := c.Call(ctx, "command.run", map[string]any{"command": "true"}); err != nil {
						t.Logf("commands are unavailable here, the run goes on without them: %v", err)
						commands = false
					} else {
						a.allowed = append(a.allowed, "command.run")
					}
				}
				c.Close()
			}
			scope = scopeFolder(t, home, "a0")
			for _, a := range fa {
				for i := range a.mfiles {
					a.model[a.p("m/f%03d.txt", i)] = "line 0\nfixed\n"
				}
				if a.n == 0 && commands {
					for i := range 2000 {
						a.model[fmt.Sprintf("a0/big/f%04d.txt", i)] = fmt.Sprintf("old %d\n", i)
					}
				}
				if a.host == "" {
					a.host = filepath.Join(scope, a.pre)
				}
				for p, v := range a.model {
					h := filepath.Join(a.host, strings.TrimPrefix(p, a.pre+"/"))
					os.MkdirAll(filepath.Dir(h), 0o755)
					writeFile(t, h, v)
				}
			}
		}

		// The work, until the daemon dies.
		var wg sync.WaitGroup
		for _, a := range fa {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.work(ctx, r, sp.special, sp.quiet, commands, dead)
			}()
		}
		killedAtPoint := false
		wait := 30 * time.Second
		if sp.killAt == "" {
			wait = time.Duration(300+rng.IntN(2500)) * time.Millisecond
			if long {
				wait = time.Duration(300+rng.IntN(8000)) * time.Millisecond
			}
		}
		select {
		case <-dead:
			killedAtPoint = true
		case <-time.After(wait):
			r.cmd.Process.Kill()
			<-dead
		}
		wg.Wait()
		st.kills++
		if killedAtPoint {
			st.pointKills++
		} else if sp.killAt != "" {
			t.Logf("round %d: kill point %s not reached in %v, killed", round, sp.killAt, wait)
		}
		var cmds []string
		for _, a := range fa {
			if a.flightCmd != "" {
				cmds = append(cmds, a.flightCmd)
				a.flightCmd = ""
			}
		}
		st.orphans += procs.orphans(t, cmds)
		st.procs += len(procs.seen)

		// Now and then the restart dies too, while Recover puts changes
		// back (a kill point) or at a random moment of the start-up.
		switch {
		case round == 1 || (long && rng.IntN(3) == 0):
			if killStart(t, home, fmt.Sprintf("CORRAL_KILL_AT=recover.change:%d", 1+rng.IntN(300)), 0) {
				st.startKills++
			}
		case long && rng.IntN(3) == 0:
			if killStart(t, home, "", time.Duration(rng.IntN(400))*time.Millisecond) {
				st.startKills++
			}
		}

		// Started again: check everything.
		r = startServeIn(t, home)
		st.orphansLeft += procs.afterRestart(t)
		db := filepath.Join(home, "corral.db")
		integrity(t, db)
		var rec string
		owner := dialKey(ctx, t, r, r.ownerKey)
		if raw, err := owner.Call(ctx, "session.info", nil); err == nil {
			var info struct {
				Recovered json.RawMessage `json:"recovered"`
			}
			json.Unmarshal(raw, &info)
			rec = string(info.Recovered)
			// Each agent works alone in its folder: nothing an unfinished
			// call changed can have changed again since.
			var r struct {
				Left int `json:"left"`
			}
			if json.Unmarshal(info.Recovered, &r) == nil && r.Left > 0 {
				t.Errorf("round %d: Recover left %d changes as they were: %s", round, r.Left, rec)
				st.failures++
			}
		}
		sdb, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var unfinished int
		sdb.QueryRow(`SELECT count(*) FROM audit_events WHERE detail LIKE '%running' OR detail LIKE '%pending'`).Scan(&unfinished)
		if unfinished > 0 {
			t.Errorf("round %d: %d events still running or pending", round, unfinished)
			st.failures++
		}
		left := temps(t, home)
		for _, a := range fa {
			if !strings.HasPrefix(a.host, home) {
				filepath.WalkDir(a.host, func(p string, d fs.DirEntry, err error) error {
					if err == nil && strings.HasPrefix(d.Name(), ".corral-tmp-") {
						left = append(left, p)
					}
					return nil
				})
			}
		}
		if len(left) > 0 {
			t.Errorf("round %d: %d temporary files left, e.g. %s", round, len(left), left[0])
			st.failures++
			st.temps += len(left)
		}
		if ents, _ := os.ReadDir(filepath.Join(home, "versions", "run")); len(ents) > 0 {
			t.Errorf("round %d: %d command layers left", round, len(ents))
			st.failures++
		}
		var flights []string
		var jobs []undoJob
		for _, a := range fa {
			st.calls += a.calls
			st.answered += a.answered
			st.refused += a.refused
			a.calls, a.answered, a.refused = 0, 0, 0
			got := fsnap(t, a)
			if a.flight != "" {
				switch {
				case got.equal(a.flightNext):
					a.prev, a.model = a.model, a.flightNext
					a.allowed = append(a.allowed, a.flight)
					st.doneUnanswered++
					flights = append(flights, a.flight+":done")
				case got.equal(a.model):
					st.rolledBack++
					flights = append(flights, a.flight+":none")
				default:
					t.Errorf("round %d: %s's %s in flight at the kill is half-applied: %s", round, a.name, a.flight, halfOf(a.model, a.flightNext, got))
					st.failures++
					st.half++
					a.model, a.prev = got, nil
				}
				a.flight, a.flightNext = "", nil
			} else if !got.equal(a.model) {
				t.Errorf("round %d: %s's folder is not what its answered calls left: %s", round, a.name, halfOf(a.model, a.model, got))
				st.failures++
				a.model, a.prev = got, nil
			}
			// Its allowed events are its answered successes.
			ids, ops := allowedEvents(t, sdb, a.name)
			if strings.Join(ops, " ") != strings.Join(a.allowed, " ") {
				t.Errorf("round %d: %s's allowed events %d, answered successes %d; the last events %v, the last answers %v", round, a.name, len(ops), len(a.allowed), tail(ops), tail(a.allowed))
				st.failures++
				a.allowed, a.prev = ops, nil
			}
			// The owner undoes its last change (below).
			if a.prev != nil && len(ids) > 0 {
				jobs = append(jobs, undoJob{a, ids[len(ids)-1], ops[len(ops)-1]})
			}
		}
		sdb.Close()
		t.Logf("round %d (%s): recovered %s; in flight %v", round, cmp.Or(sp.killAt, "random kill"), rec, flights)

		// Now and then the daemon dies during the owner's undos too
		// (kill point undo.change): each is then whole or not at all.
		undoKill := len(jobs) > 0 && (round == 4 || (long && rng.IntN(3) == 0))
		if undoKill {
			owner.Close()
			r.kill()
			n := 1 + rng.IntN(3)
			if long {
				n = 1 + rng.IntN(60)
			}
			r = startServeIn(t, home, fmt.Sprintf("CORRAL_KILL_AT=undo.change:%d", n))
			owner = dialKey(ctx, t, r, r.ownerKey)
		}
		died := -1
		for i, j := range jobs {
			a := j.a
			st.undos++
			_, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": j.id})
			var rpc *client.Error
			switch got := fsnap(t, a); {
			case err != nil && undoKill && !errors.As(err, &rpc):
				died = i
			case err != nil:
				t.Errorf("round %d: undo of %s's %s (event %d): %v", round, a.name, j.op, j.id, err)
				st.failures++
				a.model = got
			case !got.equal(a.prev):
				t.Errorf("round %d: undo of %s's %s (event %d) did not restore the old content: %s", round, a.name, j.op, j.id, halfOf(a.prev, a.model, got))
				st.failures++
				a.model = got
			default:
				a.model = a.prev
				undosDone++
			}
			if died >= 0 {
				break
			}
			a.prev = nil
		}
		if undoKill {
			if died < 0 {
				r.cmd.Process.Kill()
			}
			r.cmd.Wait()
			st.kills++
			r = startServeIn(t, home)
			integrity(t, db)
			owner = dialKey(ctx, t, r, r.ownerKey)
			var n int
			sdb, _ := sql.Open("sqlite3", "file:"+db+"?mode=ro")
			sdb.QueryRow(`SELECT count(*) FROM audit_events WHERE detail LIKE '%running' OR detail LIKE '%pending'`).Scan(&n)
			sdb.Close()
			if n > 0 {
				t.Errorf("round %d: after a kill during an undo, %d events still running or pending", round, n)
				st.failures++
			}
			if left := temps(t, home); len(left) > 0 {
				t.Errorf("round %d: after a kill during an undo, %d temporary files left", round, len(left))
				st.failures++
			}
			for i, j := range jobs {
				a := j.a
				got := fsnap(t, a)
				switch {
				case i == died && got.equal(a.prev):
					a.model = a.prev // done, its answer cut off
					st.undoKills++
					undosDone++
				case i == died && got.equal(a.model):
					st.undoKills++ // rolled back
				case i == died:
					t.Errorf("round %d: the undo of %s's %s (event %d) killed half-way is half-done: %s", round, a.name, j.op, j.id, halfOf(a.model, a.prev, got))
					st.failures++
					a.model = got
				case !got.equal(a.model):
					t.Errorf("round %d: after a kill during another undo, %s's folder is not as it was: %s", round, a.name, halfOf(a.model, a.model, got))
					st.failures++
					a.model = got
				}
				a.prev = nil
			}
		}
		// Every undo done has its event.
		if sdb, err := sql.Open("sqlite3", "file:"+db+"?mode=ro"); err == nil {
			var n int
			sdb.QueryRow(`SELECT count(*) FROM audit_events WHERE op = 'undo.apply' AND decision = 'allow'`).Scan(&n)
			sdb.Close()
			if n != undosDone {
				t.Errorf("round %d: %d undos done, %d allowed undo.apply events", round, undosDone, n)
				st.failures++
				undosDone = n
			}
		}
		owner.Close()
		r.kill()
	}
	t.Logf("%d rounds: %d calls, %d answered (%d errors answered), %d kills (%d at a kill point, %d more while starting again); in flight: %d rolled back, %d done but unanswered; %d undos (%d killed half-way); %d of the %d sandbox processes seen outlived the kill by 3 s (%d still alive after the restart); %d failures (%d half-applied, %d temporary files)",
		rounds, st.calls, st.answered, st.refused, st.kills, st.pointKills, st.startKills, st.rolledBack, st.doneUnanswered, st.undos, st.undoKills, st.orphans, st.procs, st.orphansLeft, st.failures, st.half, st.temps)
}

type undoJob struct {
	a  *fagent
	id int64
	op string
}

type fstats struct {
	undoKills, orphansLeft                                                                                                            int
	calls, answered, refused, kills, pointKills, startKills, procs, rolledBack, doneUnanswered, undos, orphans, failures, half, temps int
}

// killStart starts the daemon in home with env and kills it after wait,
// or lets it die at its kill point (wait 0); it reports whether it died
// before it served. A daemon that serves is killed idle.
func killStart(t *testing.T, home, env string, wait time.Duration) bool {
	t.Helper()
	envs := append(os.Environ(), "CORRAL_HOME="+home)
	if env != "" {
		envs = append(envs, env)
	}
	cmd, out := serveCmd(t, corralBinary(t), "127.0.0.1:0", envs, nil)
	serving, dead := watchServe(cmd, out)
	var timer <-chan time.Time
	if wait > 0 {
		timer = time.After(wait)
	}
	select {
	case <-dead:
		return true
	case <-serving:
	case <-timer:
	}
	cmd.Process.Kill()
	<-dead
	select {
	case <-serving:
		return false
	default:
		return true
	}
}

// fmodel maps an agent's files (relative to the scope) to their content.
type fmodel map[string]string

func (m fmodel) equal(o fmodel) bool { return maps.Equal(m, o) }

// halfOf says how got compares with before and after, path by path.
func halfOf(before, after, got fmodel) string {
	var asBefore, asAfter, other int
	var ex []string
	all := maps.Clone(before)
	maps.Copy(all, after)
	maps.Copy(all, got)
	for p := range all {
		g, gok := got[p]
		b, bok := before[p]
		a, aok := after[p]
		switch {
		case g == b && gok == bok && (g != a || gok != aok):
			asBefore++
		case g == a && gok == aok && (g != b || gok != bok):
			asAfter++
		case g == a && gok == aok:
		default:
			other++
			if len(ex) < 3 {
				ex = append(ex, fmt.Sprintf("%s: %d bytes (there %v), before %d (%v), after %d (%v)", p, len(g), gok, len(b), bok, len(a), aok))
			}
		}
	}
	return fmt.Sprintf("%d paths as before, %d as after, %d neither %v", asBefore, asAfter, other, ex)
}

func tail(s []string) []string {
	if len(s) > 4 {
		return s[len(s)-4:]
	}
	return s
}

// fsnap reads the agent's files.
func fsnap(t *testing.T, a *fagent) fmodel {
	t.Helper()
	out := fmodel{}
	filepath.WalkDir(a.host, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".corral-tmp-") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", p, err)
		}
		rel, _ := filepath.Rel(a.host, p)
		out[a.pre+"/"+rel] = string(b)
		return nil
	})
	return out
}

var changeOps = []string{"file.write", "file.edit", "file.delete", "file.move", "file.apply_patch", "command.run"}

// allowedEvents lists client's allowed changes, oldest first.
func allowedEvents(t *testing.T, db *sql.DB, client string) (ids []int64, ops []string) {
	t.Helper()
	rows, err := db.Query(`SELECT id, op FROM audit_events WHERE client = ? AND decision = 'allow' AND op IN ('`+strings.Join(changeOps, "','")+`') ORDER BY id`, client)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var op string
		rows.Scan(&id, &op)
		ids, ops = append(ids, id), append(ops, op)
	}
	return ids, ops
}

// procWatch notes the daemon's descendants (bubblewrap, corral-netinit,
// the commands) while it runs. bwrap takes its arguments through a file
// descriptor, so nothing in their command lines names the daemon's home.
type procWatch struct {
	mu   sync.Mutex
	seen map[int]string // pid → its start time
	left [][2]string    // pid and start time of those that outlived the kill
	stop chan struct{}
	done chan struct{}
}

func watchProcs(daemon int) *procWatch {
	w := &procWatch{seen: map[int]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			kids := map[int][]int{}
			start := map[int]string{}
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil {
					continue
				}
				if st, ppid, ok := procStat(pid); ok {
					kids[ppid] = append(kids[ppid], pid)
					start[pid] = st
				}
			}
			w.mu.Lock()
			for q := kids[daemon]; len(q) > 0; q = q[1:] {
				w.seen[q[0]] = start[q[0]]
				q = append(q, kids[q[0]]...)
			}
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// procStat reads pid's start time and parent, false for a zombie or a
// process gone.
func procStat(pid int) (start string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[19], ppid, true
}

// orphans stops the watch and counts the daemon's descendants still
// alive 3 s after its death (and the processes running one of cmds, the
// commands in flight), and kills them.
func (w *procWatch) orphans(t *testing.T, cmds []string) int {
	t.Helper()
	close(w.stop)
	<-w.done
	alive := func() []int {
		var out []int
		for pid, st := range w.seen {
			if s, _, ok := procStat(pid); ok && s == st {
				out = append(out, pid)
			}
		}
		// A command started in the last poll's interval: its bwrap names
		// the command's text (unique to this run) in its command line.
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || w.seen[pid] != "" {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if _, _, ok := procStat(pid); err != nil || !ok {
				continue
			}
			for _, c := range cmds {
				if strings.Contains(string(b), c) {
					out = append(out, pid)
					break
				}
			}
		}
		return out
	}
	deadline := time.Now().Add(3 * time.Second)
	left := alive()
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		left = alive()
	}
	for _, pid := range left {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		c := strings.ReplaceAll(string(cmd), "\x00", " ")
		if len(c) > 100 {
			c = c[:100] + "…"
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
		if len(f) > 1 {
			t.Logf("outlived the daemon's kill by 3 s: pid %d (state %s, parent %s, waits in %s) %s", pid, f[0], f[1], wchan, c)
		}
		st, _, _ := procStat(pid)
		w.left = append(w.left, [2]string{strconv.Itoa(pid), st})
	}
	return len(left)
}

// afterRestart counts the processes orphans found that are still alive
// once the daemon started again (its start-up may sweep them), and kills
// them.
func (w *procWatch) afterRestart(t *testing.T) int {
	n := 0
	for _, l := range w.left {
		pid, _ := strconv.Atoi(l[0])
		if st, _, ok := procStat(pid); ok && st == l[1] {
			n++
			t.Logf("still alive after the restart: pid %d", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return n
}

// fagent is one agent of the fault run and the model of its folder.
type fagent struct {
	n         int
	name, key string
	// pre starts its paths in calls ("a3", or a readwrite root's folder);
	// host is that folder.
	pre, host string
	rng       *rand.Rand
	mfiles    int
	gen       int
	model     fmodel
	prev      fmodel   // before its last allowed change, while undo can restore it
	allowed   []string // the ops of its allowed changes, in order
	// The call the kill cut off and the folder it would leave.
	flight                   string
	flightNext               fmodel
	flightCmd                string // a command's text
	calls, answered, refused int
}

// work makes calls until the daemon dies.
func (a *fagent) work(ctx context.Context, r *running, special, quiet string, commands bool, dead chan struct{}) {
	c, err := client.Dial(ctx, r.url, a.key)
	if err != nil {
		return // the daemon died first
	}
	defer c.Close()
	first := a.n == 0 && special != ""
	for {
		select {
		case <-dead:
			// Its next call would fail: no call in flight.
			return
		default:
		}
		var op string
		var params map[string]any
		var next fmodel
		if first {
			op, params, next = a.special(special)
			first = false
		} else {
			op, params, next = a.plan(quiet, commands)
		}
		a.calls++
		_, err := c.Call(ctx, op, params)
		var rpc *client.Error
		switch {
		case err == nil:
			a.answered++
			a.prev, a.model = a.model, next
			a.allowed = append(a.allowed, op)
		case errors.As(err, &rpc):
			a.answered++
			a.refused++
		default:
			a.flight, a.flightNext = op, next
			a.flightCmd, _ = params["command"].(string)
			return
		}
	}
}

func (a *fagent) wfile(k int) string { return a.p("w%d.txt", k) }

// p is the path of the agent's file name in its calls.
func (a *fagent) p(format string, args ...any) string {
	return a.pre + "/" + fmt.Sprintf(format, args...)
}

// special is agent 0's named case: a command appending to 2,000 files,
// or a patch of its 300 files (and one added).
func (a *fagent) special(kind string) (string, map[string]any, fmodel) {
	a.gen++
	next := maps.Clone(a.model)
	if kind == "cmd2000" {
		for p, v := range next {
			if strings.HasPrefix(p, "a0/big/") {
				next[p] = v + fmt.Sprintf("more %d\n", a.gen)
			}
		}
		return "command.run", map[string]any{"command": fmt.Sprintf("for f in a0/big/*.txt; do echo more %d >> $f; done", a.gen)}, next
	}
	return a.patch(next, a.mfiles)
}

// patch changes the first line of n of the agent's m files, and adds one.
func (a *fagent) patch(next fmodel, n int) (string, map[string]any, fmodel) {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	start := a.rng.IntN(a.mfiles - n + 1)
	for i := start; i < start+n; i++ {
		p := a.p("m/f%03d.txt", i)
		old, rest, _ := strings.Cut(next[p], "\n")
		fixed, _, _ := strings.Cut(rest, "\n")
		nl := fmt.Sprintf("line %d", a.gen)
		fmt.Fprintf(&b, "*** Update File: %s\n@@\n-%s\n+%s\n %s\n", p, old, nl, fixed)
		next[p] = nl + "\n" + rest
	}
	// Now and then an added file is deleted, or moved and changed.
	var extra []string
	for p := range next {
		if q := strings.TrimPrefix(p, a.p("m/")); q != p && (q[0] == 'p' || q[0] == 'q') {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 && a.rng.IntN(3) == 0 {
		p := extra[a.rng.IntN(len(extra))]
		fmt.Fprintf(&b, "*** Delete File: %s\n", p)
		delete(next, p)
	} else if len(extra) > 0 && a.rng.IntN(2) == 0 {
		p := extra[a.rng.IntN(len(extra))]
		if first, rest, _ := strings.Cut(next[p], "\n"); strings.HasPrefix(first, "added ") {
			to := a.p("m/q%d.txt", a.gen)
			fmt.Fprintf(&b, "*** Update File: %s\n*** Move to: %s\n@@\n-%s\n+moved %d\n", p, to, first, a.gen)
			delete(next, p)
			next[to] = fmt.Sprintf("moved %d\n", a.gen) + rest
		}
	}
	add := a.p("m/p%d.txt", a.gen)
	fmt.Fprintf(&b, "*** Add File: %s\n+added %d\n*** End Patch\n", add, a.gen)
	next[add] = fmt.Sprintf("added %d\n", a.gen)
	return "file.apply_patch", map[string]any{"patch": b.String()}, next
}

// plan picks the agent's next call and the folder it leaves.
func (a *fagent) plan(quiet string, commands bool) (string, map[string]any, fmodel) {
	a.gen++
	next := maps.Clone(a.model)
	var have, free []int
	for k := range 8 {
		if _, ok := a.model[a.wfile(k)]; ok {
			have = append(have, k)
		} else {
			free = append(free, k)
		}
	}
	content := func() string {
		return fmt.Sprintf("gen %d\n%s\n", a.gen, strings.Repeat("x", a.rng.IntN(3000)))
	}
	for {
		switch a.rng.IntN(12) {
		case 10, 11: // a folder: files written into it, moved, deleted whole
			d, e := a.p("d/"), a.p("e/")
			var in, other string
			for p := range next {
				if strings.HasPrefix(p, d) {
					in, other = d, e
				} else if strings.HasPrefix(p, e) {
					in, other = e, d
				}
			}
			k := a.rng.IntN(4)
			if in == "" || k == 0 {
				if in == "" {
					in = d
				}
				p := fmt.Sprintf("%sk%d.txt", in, a.gen)
				next[p] = content()
				return "file.write", map[string]any{"path": p, "content": next[p]}, next
			}
			for p, v := range a.model {
				if strings.HasPrefix(p, in) {
					delete(next, p)
					if k != 1 {
						next[other+strings.TrimPrefix(p, in)] = v
					}
				}
			}
			if k == 1 {
				return "file.delete", map[string]any{"path": strings.TrimSuffix(in, "/"), "recursive": true}, next
			}
			return "file.move", map[string]any{"from": strings.TrimSuffix(in, "/"), "to": strings.TrimSuffix(other, "/")}, next
		case 0, 1: // write
			p := a.wfile(a.rng.IntN(8))
			next[p] = content()
			return "file.write", map[string]any{"path": p, "content": next[p]}, next
		case 2: // edit the first line
			if len(have) == 0 {
				continue
			}
			p := a.wfile(have[a.rng.IntN(len(have))])
			first, _, _ := strings.Cut(next[p], "\n")
			nl := fmt.Sprintf("gen %d", a.gen)
			next[p] = strings.Replace(next[p], first+"\n", nl+"\n", 1)
			return "file.edit", map[string]any{"path": p, "old_text": first + "\n", "new_text": nl + "\n"}, next
		case 3: // append, now and then 3.5 MB
			if len(have) == 0 {
				continue
			}
			p := a.wfile(have[a.rng.IntN(len(have))])
			add := fmt.Sprintf("app %d\n", a.gen)
			if a.rng.IntN(6) == 0 && len(next[p]) < 6<<20 {
				add = strings.Repeat(fmt.Sprintf("big append %d\n", a.gen), 3_500_000/len(add)/2)
			}
			next[p] += add
			return "file.write", map[string]any{"path": p, "content": add, "append": true}, next
		case 4: // delete
			if len(have) < 2 {
				continue
			}
			p := a.wfile(have[a.rng.IntN(len(have))])
			delete(next, p)
			return "file.delete", map[string]any{"path": p}, next
		case 5: // move
			if len(have) == 0 || len(free) == 0 {
				continue
			}
			from, to := a.wfile(have[a.rng.IntN(len(have))]), a.wfile(free[a.rng.IntN(len(free))])
			next[to] = next[from]
			delete(next, from)
			return "file.move", map[string]any{"from": from, "to": to}, next
		case 6, 7: // patch
			if quiet == "patches" {
				continue
			}
			return a.patch(next, 1+a.rng.IntN(a.mfiles))
		default: // a command: a line to every m file, a w file written
			if quiet == "commands" || !commands {
				continue
			}
			prefix := a.p("m/")
			for p, v := range next {
				if strings.HasPrefix(p, prefix) {
					next[p] = v + fmt.Sprintf("c%d\n", a.gen)
				}
			}
			k := a.rng.IntN(8)
			w := a.wfile(k)
			next[w] = fmt.Sprintf("gen %d\n", a.gen)
			cmd := fmt.Sprintf("for f in %s*.txt; do echo c%d >> $f; done; echo gen %d > %s", prefix, a.gen, a.gen, w)
			if j := (k + 1 + a.rng.IntN(7)) % 8; len(have) > 1 && next[a.wfile(j)] != "" {
				cmd += "; rm " + a.wfile(j)
				delete(next, a.wfile(j))
			}
			if a.rng.IntN(3) == 0 {
				made := a.p("c%d/x/f.txt", a.gen)
				cmd += fmt.Sprintf("; mkdir -p %s && echo made > %s", a.p("c%d/x", a.gen), made)
				next[made] = "made\n"
			}
			return "command.run", map[string]any{"command": cmd}, next
		}
	}
}

// The owner's undo of a 300-file command, killed half-way (kill point
// undo.change:150): after the restart the files are all as the command
// left them (the undo rolled back, its event interrupted) or all as
// before it (the undo done, with its event), never half of each; no
// event is left pending, and the undo then works.
func TestCrashDuringUndo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home, r, agent, scope := undoRig(ctx, t, "many/f000.txt", "old 0\n")
	for i := 1; i < 300; i++ {
		writeFile(t, filepath.Join(scope, "many", fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("old %d\n", i))
	}
	orig := snapshot(t, scope)
	if _, err := agent.Call(ctx, "command.run", map[string]any{"command": "for f in many/f*.txt; do echo more >> $f; done"}); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, scope)
	db := filepath.Join(home, "corral.db")
	cmdID, _, _ := lastEventInFile(t, db, "command.run")
	agent.Close()
	r.kill()

	r = startServeIn(t, home, "CORRAL_KILL_AT=undo.change:150")
	owner := dialKey(ctx, t, r, r.ownerKey)
	if _, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": cmdID}); err == nil {
		t.Fatal("the undo was answered; the daemon should have died half-way")
	}
	r.cmd.Wait()

	r = startServeIn(t, home)
	integrity(t, db)
	got := snapshot(t, scope)
	undoID, detail, decision := lastEventInFile(t, db, "undo.apply")
	switch {
	case maps.Equal(got, after):
		if undoID != 0 && decision == "allow" {
			t.Errorf("the files are as the command left them, but the undo's event %d is allowed (%q)", undoID, detail)
		}
	case maps.Equal(got, orig):
		if undoID == 0 || decision != "allow" {
			t.Errorf("the files are undone, but the undo has no allowed event (%d %q %s)", undoID, detail, decision)
		}
	default:
		var old, more int
		for k, v := range got {
			switch v {
			case orig[k]:
				old++
			case after[k]:
				more++
			}
		}
		t.Errorf("the undo is half-done: %d files as before the command, %d as it left them; its event %d %q %s", old, more, undoID, detail, decision)
	}
	if strings.HasSuffix(detail, "pending") || strings.HasSuffix(detail, "running") {
		t.Errorf("the undo's event is unfinished: %q", detail)
	}
	if left := temps(t, home); len(left) > 0 {
		t.Errorf("temporary files left: %d", len(left))
	}
	owner = dialKey(ctx, t, r, r.ownerKey)
	if _, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": cmdID}); err != nil && !maps.Equal(got, orig) {
		t.Errorf("undo after the restart: %v", err)
	}
	sameSnapshot(t, orig, snapshot(t, scope))
}

// A command that made folders with files in them: the owner's undo
// removes the files and then the folders (it answered a conflict, "out
// holds files now", before), and so does Recover's roll back of such a
// command killed while it was applied (it left the folders, and counted
// them as changes it could not put back).
func TestUndoCommandThatMadeFolders(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home, r, agent, scope := undoRig(ctx, t, "keep.txt", "kept\n")
	orig := snapshot(t, scope)
	const made = "mkdir -p out/deep && echo x > out/deep/f.txt && echo y > out/g.txt && echo z > out/h.txt"
	if _, err := agent.Call(ctx, "command.run", map[string]any{"command": made}); err != nil {
		t.Fatal(err)
	}
	owner := dialKey(ctx, t, r, r.ownerKey)
	var page struct {
		Events []struct {
			ID int64 `json:"id"`
		} `json:"events"`
	}
	if err := owner.CallInto(ctx, "audit.query", map[string]any{"limit": 1, "op": "command.run"}, &page); err != nil || len(page.Events) != 1 {
		t.Fatalf("audit.query: %v %+v", err, page)
	}
	if raw, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": page.Events[0].ID}); err != nil {
		t.Errorf("undo of the command: %v %s", err, raw)
	}
	sameSnapshot(t, orig, snapshot(t, scope))
	agent.Close()
	owner.Close()
	r.kill()

	// Killed after the command's second file landed, then started again.
	r = startServeIn(t, home, "CORRAL_KILL_AT=apply.file:2")
	agent = dialAgent(ctx, t, r)
	orig = snapshot(t, scope)
	if _, err := agent.Call(ctx, "command.run", map[string]any{"command": strings.ReplaceAll(made, "out", "out2")}); err == nil {
		t.Fatal("the command was answered; the daemon should have died at apply.file:2")
	}
	r.cmd.Wait()
	r = startServeIn(t, home)
	owner = dialKey(ctx, t, r, r.ownerKey)
	var info struct {
		Recovered *struct {
			RolledBack int `json:"rolled_back"`
			Left       int `json:"left"`
		} `json:"recovered"`
	}
	if err := owner.CallInto(ctx, "session.info", nil, &info); err != nil || info.Recovered == nil || info.Recovered.Left != 0 {
		t.Errorf("session.info.recovered: %v %+v", err, info.Recovered)
	}
	sameSnapshot(t, orig, snapshot(t, scope))
}
