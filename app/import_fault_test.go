package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRuleImportKilled: the daemon is SIGKILLed in the middle of a
// rule.import of 6 rules, after the third is saved (rule.saved:3). After
// the restart none of the 6 is in force (all or nothing), and the same
// file imported again adds all 6.
func TestRuleImportKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the daemon")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The rules file, as another Corral exports it.
	src := startServe(t)
	so := dialKey(ctx, t, src, src.ownerKey)
	const n = 6
	for i := range n {
		if _, err := so.Call(ctx, "rule.add", map[string]any{"client": "*", "access": "network", "target": fmt.Sprintf("host%d.example.com", i), "decision": "allow"}); err != nil {
			t.Fatal(err)
		}
	}
	var ex struct {
		File  string `json:"file"`
		Count int    `json:"count"`
	}
	if err := so.CallInto(ctx, "rule.export", nil, &ex); err != nil || ex.Count != n {
		t.Fatalf("export: %+v %v", ex, err)
	}

	home := t.TempDir()
	r := startServeIn(t, home, "CORRAL_KILL_AT=rule.saved:3")
	o := dialKey(ctx, t, r, r.ownerKey)
	if res, err := o.Call(ctx, "rule.import", map[string]any{"file": ex.File}); err == nil {
		t.Fatalf("rule.import answered %s through a kill", res)
	}
	if err := r.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the daemon ended with %v, not at its kill point", err)
	}

	r = startServeIn(t, home)
	o = dialKey(ctx, t, r, r.ownerKey)
	count := func() int {
		var res struct {
			Rules []json.RawMessage `json:"rules"`
		}
		if err := o.CallInto(ctx, "rule.list", nil, &res); err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, raw := range res.Rules {
			if strings.Contains(string(raw), ".example.com") {
				k++
			}
		}
		return k
	}
	if k := count(); k != 0 {
		t.Errorf("%d of the %d rules in force after a rule.import killed half-way, want none", k, n)
	}
	var im struct{ Added, Skipped int }
	if err := o.CallInto(ctx, "rule.import", map[string]any{"file": ex.File}, &im); err != nil || im.Added+im.Skipped != n {
		t.Fatalf("the import again: %+v %v", im, err)
	}
	if k := count(); k != n {
		t.Errorf("%d rules in force after the import, want %d", k, n)
	}
	t.Logf("the import again: %+v", im)
}
