package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/core/testkit/poll"
	"corral/store/storetest"
)

// TestFullDiskAtStart is issue 31's eighth case: on a full disk Corral
// refused to start ("optimize: database or disk is full") and did not
// come back once there was room. Now the daemon starts (the reserve its
// last run left gives SQLite the room to open), refuses agent operations
// with the full-disk sentence, and resumes by itself, reserve and all,
// once space is freed.
func TestFullDiskAtStart(t *testing.T) {
	t.Parallel()
	dir := storetest.SmallDisk(t, "96m")
	home := filepath.Join(dir, "corral")

	first := startServe(t, "CORRAL_HOME="+home)
	call := func(r *running, key string, args ...string) (string, error) {
		c := exec.Command(r.bin, append([]string{"call"}, args...)...)
		c.Env = r.envWith(key)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := call(first, first.agentKey, "file.write", `{"path":"before.txt","content":"before"}`); err != nil {
		t.Fatalf("a write before the disk fills: %v %s", err, out)
	}
	// A clean stop: SQLite removes the -wal and -shm, which it must
	// create again to open.
	first.cmd.Process.Signal(syscall.SIGTERM)
	first.cmd.Wait()
	reserve := filepath.Join(home, "corral.db.reserve")
	if _, err := os.Stat(reserve); err != nil {
		t.Fatalf("no reserve after the first run: %v", err)
	}

	// Fill the disk to the last block.
	for i, bs := range []string{"1M", "4k"} {
		out, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "fill"+bs), "bs="+bs).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "No space left") {
			t.Fatalf("dd %d did not fill the disk: %v %s", i, err, out)
		}
	}

	r := startServe(t, "CORRAL_HOME="+home)
	out, err := call(r, r.agentKey, "file.write", `{"path":"during.txt","content":"x"}`)
	if err == nil || !strings.Contains(out, "full") {
		t.Errorf("a write on a full disk: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "sandbox")); err == nil {
		found, _ := filepath.Glob(filepath.Join(home, "sandbox", "*", "during.txt"))
		if len(found) != 0 {
			t.Errorf("the refused write landed: %v", found)
		}
	}
	out, err = call(r, r.ownerKey, "session.info")
	var info struct {
		AuditProblem string `json:"audit_problem"`
	}
	if err != nil || json.Unmarshal([]byte(out), &info) != nil || !strings.Contains(info.AuditProblem, "full") {
		t.Errorf("session.info on a full disk: %v %s", err, out)
	}

	for _, bs := range []string{"1M", "4k"} {
		os.Remove(filepath.Join(dir, "fill"+bs))
	}
	poll.EventuallyNil(t, time.Minute, func() error {
		out, err := call(r, r.agentKey, "file.write", `{"path":"after.txt","content":"after"}`)
		if err != nil {
			return fmt.Errorf("%v %s", err, out)
		}
		return nil
	}, "Corral to resume once there was room")
	if fi, err := os.Stat(reserve); err != nil || fi.Size() == 0 {
		t.Errorf("the reserve was not taken back: %v %v", fi, err)
	}
	out, err = call(r, r.ownerKey, "audit.query", `{"op":"file.write"}`)
	var page struct {
		Events []struct{ Target, Error string }
	}
	if err != nil || json.Unmarshal([]byte(out), &page) != nil {
		t.Fatalf("audit.query: %v %s", err, out)
	}
	var targets []string
	for _, e := range page.Events {
		targets = append(targets, e.Target)
	}
	if got := strings.Join(targets, " "); got != "after.txt before.txt" {
		t.Errorf("write events: %q, want after.txt and before.txt", got)
	}
}
