package config

import (
	"path/filepath"
	"sync"
	"testing"
)

// TestFirstConfigRace: two programs starting at once on a fresh home
// (the daemon and `corral call`, or the tray) both write the default
// config.toml; each must read the whole of the one that won, never a
// file the other had created but not yet written. Before the fix the
// loser could read it empty: the daemon then ran with no agent, and the
// key written a moment later was refused (package-test: "did not accept
// the key").
func TestFirstConfigRace(t *testing.T) {
	for i := range 300 {
		path := filepath.Join(t.TempDir(), "corral", "config.toml")
		var wg sync.WaitGroup
		keys := make([]string, 2)
		for j := range 2 {
			wg.Go(func() {
				c, err := Load(path, t.TempDir(), t.TempDir())
				if err != nil {
					t.Errorf("round %d: %v", i, err)
					return
				}
				if len(c.Clients) != 1 {
					t.Errorf("round %d: loaded %d agents from the first config.toml, want 1", i, len(c.Clients))
					return
				}
				keys[j] = c.Clients[0].Key
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		if keys[0] != keys[1] {
			t.Fatalf("round %d: the two starts got different keys", i)
		}
	}
}
