package execbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

func runHelper(t *testing.T, r *Runner, s HelperSpec) Result {
	t.Helper()
	res, err := r.RunHelper(context.Background(), s)
	if err != nil {
		t.Fatalf("RunHelper: %v", err)
	}
	return res
}

// The helper reads stdin and writes stdout; it sees no folder of the
// owner's, no network but its own loopback, and can write nowhere.
func TestRunHelperFenced(t *testing.T) {
	b := newBox(t)
	writeFile(t, b.scope+"/secret.txt", "alice's secret")
	r := newRunner(t, b.opts())

	res := runHelper(t, r, HelperSpec{Binary: "/bin/cat", Stdin: []byte("document bytes")})
	if res.Stdout != "document bytes" || res.ExitCode != 0 {
		t.Fatalf("cat: %+v", res)
	}

	script := `
for d in /tmp /dev/shm / /helper-dir; do (echo x > "$d/probe") 2>/dev/null && echo "wrote $d"; done
for d in /corral /share ` + b.scope + ` ` + b.corral + `; do [ -n "$(ls -A $d 2>/dev/null)" ] && echo "saw $d"; done
cat ` + b.scope + `/secret.txt 2>/dev/null
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
echo done`
	res = runHelper(t, r, HelperSpec{Binary: "/bin/sh", Args: []string{"-c", script}})
	out := strings.Fields(res.Stdout)
	if strings.Join(out, " ") != "lo done" {
		t.Fatalf("helper saw or wrote too much:\n%s\nstderr: %s", res.Stdout, res.Stderr)
	}
}

// A helper that spins is stopped by its CPU limit long before the wall
// timeout.
func TestRunHelperCPULimit(t *testing.T) {
	r := newRunner(t, Options{})
	res := runHelper(t, r, HelperSpec{
		Binary: "/bin/sh", Args: []string{"-c", "while :; do :; done"},
		Timeout: time.Minute, Limits: HelperLimits{CPUTime: time.Second},
	})
	if res.TimedOut || (res.Signal != "SIGXCPU" && res.Signal != "SIGKILL") || res.Duration > 30*time.Second {
		t.Fatalf("spinning helper: %+v", res)
	}
}

func TestRunHelperTimeout(t *testing.T) {
	r := newRunner(t, Options{})
	res := runHelper(t, r, HelperSpec{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 30"}, Timeout: 300 * time.Millisecond})
	if !res.TimedOut {
		t.Fatalf("blocked helper: %+v", res)
	}
}

func TestRunHelperMemoryLimit(t *testing.T) {
	r := newRunner(t, Options{})
	// head -c allocates nothing; awk building a 64 MiB string does.
	res := runHelper(t, r, HelperSpec{
		Binary: "/usr/bin/awk", Args: []string{`BEGIN { s = "x"; while (length(s) < 256*1024*1024) s = s s; print "survived" }`},
		Limits: HelperLimits{Memory: 32 << 20, AddressSpace: 64 << 20},
	})
	if strings.Contains(res.Stdout, "survived") || res.ExitCode == 0 {
		t.Fatalf("awk outgrew the memory limit: %+v", res)
	}
}

func TestRunHelperMissingBinary(t *testing.T) {
	r := newRunner(t, Options{})
	_, err := r.RunHelper(context.Background(), HelperSpec{Binary: "/nonexistent/helper"})
	errkind.Want(t, err, errs.Unavailable)
}

// A helper that forks past HelperLimits.Procs is refused the extra
// processes, whether the limit is RLIMIT_NPROC (a normal user) or the
// run's pids cgroup (root, where RLIMIT_NPROC does not apply).
func TestRunHelperProcessLimit(t *testing.T) {
	r := newRunner(t, Options{})
	t.Log("process limit:", r.ProcessLimit())
	script := `n=0; i=0; while [ $i -lt 40 ]; do sleep 30 & [ $? -eq 0 ] && n=$((n+1)); i=$((i+1)); done; echo "$n"; kill $(jobs -p) 2>/dev/null; exit 0`
	res := runHelper(t, r, HelperSpec{
		Binary: "/bin/sh", Args: []string{"-c", script},
		Timeout: 20 * time.Second, Limits: HelperLimits{Procs: 8},
	})
	if strings.TrimSpace(res.Stdout) == "40" {
		t.Fatalf("a helper limited to 8 processes started 40: %+v", res)
	}
	if !strings.Contains(res.Stderr, "fork") && !strings.Contains(res.Stderr, "Resource temporarily unavailable") {
		t.Errorf("no fork refusal in stderr: %+v", res)
	}
}
