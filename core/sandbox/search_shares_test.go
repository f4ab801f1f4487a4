package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"corral/core/testkit/stacks"
)

// TestGrepFairShare: file.grep, too, runs in the daemon's process. The red
// team's agent ran 32 greps at once over 200 MB of its own text files (a
// pattern found nowhere): another agent's 4 KiB file.read took p50 0.6–1 s,
// p95 1.8 s, the owner's session.info up to 2.5 s, and the daemon kept
// searching for 4 s after the agent's connection closed. One agent's
// greps search one at a time, as its patches do.
func TestGrepFairShare(t *testing.T) {
	w := newWorld(t)
	files := map[string]string{}
	text := strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit\n", 4<<10)
	for i := range 16 {
		files["big/f"+strconv.Itoa(i)+".txt"] = text
	}
	w.layout(t, files)
	most := stacks.MostAtOnce(6, "corral/core/fsbox.Dir.Grep(", func() {
		res, err := w.box.Grep(context.Background(), alice, GrepArgs{Pattern: "zq[0-9]+x", Path: "big"})
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("grep answered %+v, %v", res, err)
		}
	})
	if most > 1 {
		t.Errorf("%d of one agent's greps ran at once", most)
	}
}

// TestFindFairShare: file.find walks its tree in the daemon's process.
// The red team's agent ran 32 finds at once over 60,000 files of its own
// (a pattern matching none): another agent's 4 KiB file.read took p50
// 640 ms, p95 1 s, the owner's session.info up to 0.6 s. One agent's
// finds search one at a time, as its greps and patches do.
func TestFindFairShare(t *testing.T) {
	w := newWorld(t)
	files := map[string]string{}
	for i := range 40 {
		for j := range 100 {
			files["tree/d"+strconv.Itoa(i)+"/f"+strconv.Itoa(j)+".txt"] = ""
		}
	}
	w.layout(t, files)
	most := stacks.MostAtOnce(6, "corral/core/fsbox.Dir.Find(", func() {
		res, err := w.box.Find(context.Background(), alice, FindArgs{Pattern: "**/*.nomatch", Path: "tree"})
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("find answered %+v, %v", res, err)
		}
	})
	if most > 1 {
		t.Errorf("%d of one agent's finds ran at once", most)
	}
}

// layout writes files in alice's folder: "a/b.txt" → content.
func (w *world) layout(t *testing.T, files map[string]string) {
	t.Helper()
	dir, err := w.box.ScopeDir("alice")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
