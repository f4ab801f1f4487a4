package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"corral/core/testkit/poll"
)

// TestCommandsDieWithTheDaemon is issue 31's tenth case: bubblewrap
// processes of commands running when the daemon was SIGKILLed were still
// alive a quarter of an hour later. bubblewrap's --die-with-parent binds
// it to the daemon only once it has set itself up; in a command being
// started at the kill, the sandbox's first process ran on, unlimited and
// unrecorded. Here one command runs and another is being started,
// bubblewrap held back for a few seconds by a wrapper found first in PATH
// (it then execs the real one), so the kill lands in that moment every
// time; once the daemon is killed no process of either may remain.
func TestCommandsDieWithTheDaemon(t *testing.T) {
	t.Parallel()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if testing.Short() {
			t.Skip("no bubblewrap; skipped under -short")
		}
		t.Fatal("commands need bubblewrap (packaging/deps.sh installs it)")
	}
	tag := "corral-orphan-" + rand.Text()[:12]
	// Traversable by all: as root, bubblewrap runs as an unprivileged uid
	// (core/execbox), and t.TempDir's parent is 0700.
	bin, err := os.MkdirTemp("", "corral-bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncase \"$*\" in *" + tag + "starting*) sleep 3;; esac\nexec " + bwrap + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(bin, "bwrap")
	r := startServe(t, "PATH="+bin+":"+os.Getenv("PATH"))
	t.Cleanup(func() { // a failed run leaves nothing behind either
		for pid := range tagged(tag) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	run := func(name string) {
		c := exec.Command(r.bin, "call", "command.run", `{"command":"sleep 600 # `+tag+name+`"}`)
		c.Env = r.agentEnv()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	wait := func(what string, ok func(map[int]string) bool) map[int]string {
		t.Helper()
		defer func() {
			if t.Failed() { // only then: the daemon may still be writing to it
				t.Logf("the daemon's stderr:\n%s", r.stderr.String())
			}
		}()
		var procs map[int]string
		poll.EventuallyNil(t, 30*time.Second, func() error {
			if procs = tagged(tag); !ok(procs) {
				return fmt.Errorf("%v", procs)
			}
			return nil
		}, "%s", what)
		return procs
	}
	run("running")
	wait("the command to start", func(p map[int]string) bool { return countSleeps(p) == 1 })
	run("starting")
	procs := wait("the second command to be starting", func(p map[int]string) bool {
		return strings.Contains(cmdlines(p), wrapper)
	})
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r.cmd.Wait()

	poll.EventuallyNil(t, 30*time.Second, func() error {
		left := map[int]string{}
		for pid, id := range procs {
			if procID(pid) == id {
				left[pid] = cmdline(pid)
			}
		}
		for pid := range tagged(tag) {
			left[pid] = cmdline(pid)
		}
		if len(left) > 0 {
			return fmt.Errorf("processes left: %v", left)
		}
		return nil
	}, "the killed daemon's commands' processes to end")
}

func cmdlines(procs map[int]string) string {
	var b strings.Builder
	for pid := range procs {
		b.WriteString(cmdline(pid) + "\n")
	}
	return b.String()
}

func countSleeps(procs map[int]string) int {
	n := 0
	for pid := range procs {
		if strings.HasPrefix(cmdline(pid), "sleep 600") {
			n++
		}
	}
	return n
}

// tagged returns the processes whose command line holds tag and all
// their descendants, each with procID's identity.
func tagged(tag string) map[int]string {
	children := map[int][]int{}
	var roots []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if strings.Contains(cmdline(pid), tag) {
			roots = append(roots, pid)
		}
		if pp := ppid(pid); pp > 0 {
			children[pp] = append(children[pp], pid)
		}
	}
	out := map[int]string{}
	for len(roots) > 0 {
		pid := roots[0]
		roots = roots[1:]
		if _, seen := out[pid]; seen {
			continue
		}
		if id := procID(pid); id != "" {
			out[pid] = id
		}
		roots = append(roots, children[pid]...)
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// stat returns the fields of /proc/PID/stat after the command name.
func stat(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

func ppid(pid int) int {
	f := stat(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// procID names a live process (pid and start time, so a reused pid is
// another process), or "" when pid is gone or a zombie.
func procID(pid int) string {
	f := stat(pid)
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return strconv.Itoa(pid) + "@" + f[19]
}
