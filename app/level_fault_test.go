package main

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSetLevelKilled: the owner sets trust levels back to back on an
// agent of config.toml (kept in agent_state) and on one added at runtime
// (kept in agents), and the daemon is SIGKILLed at a random moment. After each restart each agent's level is the last one answered
// or the one in flight, never another, and every answered change has its
// agent.set_level event. Two kills; eight under CORRAL_LONG_FAULTS.
func TestSetLevelKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the daemon")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	r := startServeIn(t, home)
	o := dialKey(ctx, t, r, r.ownerKey)
	var list struct {
		Agents []struct {
			Name, User, Level string
			FromConfig        bool `json:"from_config"`
		}
	}
	if err := o.CallInto(ctx, "agent.list", nil, &list); err != nil || len(list.Agents) == 0 {
		t.Fatalf("agent.list: %+v %v", list, err)
	}
	cfgAgent, user := list.Agents[0].Name, list.Agents[0].User
	if _, err := o.Call(ctx, "agent.add", map[string]any{"name": "added", "user": user}); err != nil {
		t.Fatal(err)
	}
	names := []string{cfgAgent, "added"}
	levels := []string{"ask", "trusted", "read_only"}
	answered := map[string]string{}
	events := map[string]int{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	db := filepath.Join(home, "corral.db")
	rounds := 2
	if os.Getenv("CORRAL_LONG_FAULTS") != "" {
		rounds = 8
	}
	for round := range rounds + 1 {
		if round > 0 {
			r = startServeIn(t, home)
			o = dialKey(ctx, t, r, r.ownerKey)
		}
		if err := o.CallInto(ctx, "agent.list", nil, &list); err != nil {
			t.Fatal(err)
		}
		sdb, _ := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		for _, a := range list.Agents {
			var n int
			sdb.QueryRow(`SELECT count(*) FROM audit_events WHERE op = 'agent.set_level' AND target = ? AND decision = 'allow'`, a.Name).Scan(&n)
			if n < events[a.Name] {
				t.Errorf("round %d: %s has %d set_level events, %d were answered", round, a.Name, n, events[a.Name])
			}
			if want, ok := answered[a.Name]; ok && a.Level != want {
				if n == events[a.Name] {
					t.Errorf("round %d: %s's level is %q, the last answered %q, and no event records the change", round, a.Name, a.Level, want)
				} else {
					t.Logf("round %d: %s's level is the one in flight at the kill, %q (recorded)", round, a.Name, a.Level)
				}
			}
			answered[a.Name], events[a.Name] = a.Level, n
		}
		sdb.Close()
		if round == rounds {
			break
		}

		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				name, level := names[i%2], levels[(i/2+round)%3]
				if _, err := o.Call(ctx, "agent.set_level", map[string]any{"name": name, "level": level}); err != nil {
					return
				}
				answered[name] = level
				events[name]++
			}
		}()
		time.Sleep(time.Duration(50+rng.IntN(300)) * time.Millisecond) // the kill's moment, at random
		r.kill()
		<-done
		t.Logf("round %d: answered levels %v, events %v", round, answered, events)
	}
}
