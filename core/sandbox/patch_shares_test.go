package sandbox

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// inside counts the goroutines of this process whose stack holds frame
// (a function's name as runtime.Stack prints it) at this instant.
func inside(frame string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte(frame))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// mostAtOnce runs call n times at once and returns the most goroutines
// seen inside frame meanwhile.
func mostAtOnce(n int, frame string, call func()) int {
	stop := make(chan struct{})
	var most int
	var watch sync.WaitGroup
	watch.Go(func() {
		for {
			most = max(most, inside(frame))
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	})
	var calls sync.WaitGroup
	for range n {
		calls.Go(call)
	}
	calls.Wait()
	close(stop)
	watch.Wait()
	return most
}

// TestPatchSearchFairShare: hunk searches run in the daemon's own process,
// on its few cores. The red team's agent sent 32 pathological patches at
// once (a 30,000-line hunk against a 60,000-line file, each bounded and
// cancellable but costly): another agent's 4 KiB file.read went from
// under 1 ms to p50 490 ms, p95 1.6 s (max 3.1 s), and the owner's
// session.info took up to 0.94 s. One agent's searches run one at a time
// (the others wait, cancellable), so that agent gets one core at most.
func TestPatchSearchFairShare(t *testing.T) {
	w := newWorld(t)
	content, text := pathologicalPatch()
	w.layout(t, map[string]string{"a.go": content})
	most := mostAtOnce(6, "corral/core/patch.(*File).Apply(", func() {
		_, err := w.box.ApplyPatch(context.Background(), alice, PatchArgs{Patch: text})
		if err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("the pathological patch answered %v", err)
		}
	})
	if most > 1 {
		t.Errorf("%d of one agent's hunk searches ran at once", most)
	}
}

// pathologicalPatch is a 60,000-line file and a Codex patch whose
// 30,000-line hunk matches everywhere but in its last line.
func pathologicalPatch() (content, text string) {
	content = strings.Repeat("\tx := 1\n", 60000)
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: a.go\n@@\n")
	for range 29999 {
		p.WriteString(" \tx := 1\n")
	}
	p.WriteString("-\tnowhere()\n+\tgone()\n*** End Patch\n")
	return content, p.String()
}

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
	most := mostAtOnce(6, "corral/core/fsbox.Dir.Grep(", func() {
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
	most := mostAtOnce(6, "corral/core/fsbox.Dir.Find(", func() {
		res, err := w.box.Find(context.Background(), alice, FindArgs{Pattern: "**/*.nomatch", Path: "tree"})
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("find answered %+v, %v", res, err)
		}
	})
	if most > 1 {
		t.Errorf("%d of one agent's finds ran at once", most)
	}
}
