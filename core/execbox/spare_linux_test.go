package execbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/testkit/poll"
)

// waitSpare waits until r has a spare ready.
func waitSpare(t *testing.T, r *Runner) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, func() bool { return len(r.spares) > 0 }, "a spare to be made")
}

// TestSpareStartsInCgroup: as root, a command starts from a spare made
// ahead of time, already in its memory cgroup, so no process is moved
// into a cgroup while the sandbox waits to start (that waited for an RCU
// grace period, 8 ms of a 30 ms `true`); the memory and process limits
// still hold for a command started that way.
func TestSpareStartsInCgroup(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("spares are made as root only")
	}
	b := newBox(t)
	opts := b.opts()
	opts.Limits.Total = 96 << 20
	opts.Limits.Procs = 64
	r := newRunner(t, opts)
	if !r.useSpares() || r.memory == nil {
		t.Fatalf("root, but no spares (memory cgroup %v, process limit %s)", r.memory != nil, r.ProcessLimit())
	}
	run(t, r, b.spec("true")) // the first run makes the first spare
	waitSpare(t, r)
	before := waitingJoins.Load()
	res := run(t, r, b.spec("cat /proc/self/cgroup"))
	if n := waitingJoins.Load() - before; n != 0 {
		t.Errorf("%d cgroup joins while the sandbox waited, want 0", n)
	}
	if !strings.Contains(res.Stdout, "memory:") {
		t.Errorf("cgroups seen by the command: %q", res.Stdout)
	}

	waitSpare(t, r)
	hog := `python3 -c 'import time; x = bytearray(60 << 20); x[::4096] = b"x" * len(x[::4096]); time.sleep(3)'`
	res = run(t, r, b.spec(hog+" & a=$!; "+hog+" & b=$!; "+hog+" & c=$!; for p in $a $b $c; do wait $p; echo $?; done"))
	if !slices.Contains(strings.Fields(res.Stdout), "137") {
		t.Errorf("three 60 MiB processes ran under a 96 MiB limit from a spare: %+v", res)
	}

	waitSpare(t, r)
	res = run(t, r, b.spec("i=0; while [ $i -lt 500 ]; do sleep 20 & i=$((i+1)); echo $i > count; done; echo finished"))
	if strings.Contains(res.Stdout, "finished") {
		t.Errorf("fork loop from a spare not stopped: %+v", res)
	}
}

// TestSpareSeesLaterMounts: a command started from a spare sees what was
// mounted after the spare was made (a root's disk plugged in meanwhile):
// the spare makes its mount namespace when the command comes. Where the
// host's "/" propagates nothing (here, in many containers), a namespace
// made with the spare showed the empty folder under the new mount.
func TestSpareSeesLaterMounts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("spares are made as root only")
	}
	b := newBox(t)
	r := newRunner(t, b.opts())
	if !r.useSpares() {
		t.Fatal("root, but no spares")
	}
	dir := filepath.Join(b.outside, "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, r, b.spec("true"))
	waitSpare(t, r)
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	writeFile(t, filepath.Join(dir, "marker"), "plugged in\n")
	s := b.spec("cat " + dir + "/marker")
	s.Mounts = []Mount{{Host: dir}}
	if res := run(t, r, s); res.Stdout != "plugged in\n" {
		t.Errorf("a mount made after the spare: %+v", res)
	}
}

// TestDeadSpareNotUsed: a spare whose process has gone is not handed a
// command; the run starts its own helper and the command runs.
func TestDeadSpareNotUsed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("spares are made as root only")
	}
	b := newBox(t)
	r := newRunner(t, b.opts())
	run(t, r, b.spec("true"))
	waitSpare(t, r)
	sp := <-r.spares
	sp.Cmd.Process.Kill()
	poll.Eventually(t, 10*time.Second, func() bool { return !sp.Alive() }, "the killed spare to die")
	r.spares <- sp
	if res := run(t, r, b.spec("echo ran")); res.Stdout != "ran\n" {
		t.Errorf("with a dead spare: %+v", res)
	}
}
