package main

import (
	"bufio"
	"corral/ui/bustest"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// idleWindow is how long BenchmarkIdleCPU watches each process; the
// figures are scaled to ticks per 20 s, the unit of issue 19.
const idleWindow = 10 * time.Second

// BenchmarkIdleCPU starts the tray app (`corral` on a virtual display, with
// a session bus and a StatusNotifier host, so the icon and its menu are
// up) and the headless daemon (`corral serve --headless`, the reference)
// in the same run, lets each settle, and reports the CPU each used while
// idle in clock ticks (USER_HZ, 100 a second) per 20 s: utime+stime from
// /proc/<pid>/stat over idleWindow, scaled.
func BenchmarkIdleCPU(b *testing.B) {
	for _, tool := range []string{"Xvfb", "dbus-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s is missing (run packaging/deps.sh): %v", tool, err)
		}
	}
	bin := corralBinary(b)
	display := startXvfb(b)
	bus := bustest.Start(b)
	w := newFakeWatcher(b, bus)
	tray := startTray(b, bin, display, bus)
	w.item(b)
	defer tray.stop()
	headless := startHeadless(b, bin)
	defer func() { headless.Process.Signal(syscall.SIGTERM); headless.Wait() }()
	time.Sleep(2 * time.Second) // let start-up settle (a measurement, not a wait for a state)
	b.ResetTimer()
	var trayTicks, headlessTicks float64
	for range b.N {
		t0, h0 := cpuTicks(b, tray.cmd.Process.Pid), cpuTicks(b, headless.Process.Pid)
		time.Sleep(idleWindow) // the measured window itself: CPU used over it is the figure
		t1, h1 := cpuTicks(b, tray.cmd.Process.Pid), cpuTicks(b, headless.Process.Pid)
		trayTicks += float64(t1 - t0)
		headlessTicks += float64(h1 - h0)
	}
	scale := float64(20*time.Second) / float64(idleWindow) / float64(b.N)
	b.ReportMetric(trayTicks*scale, "tray-ticks/20s")
	b.ReportMetric(headlessTicks*scale, "headless-ticks/20s")
	b.ReportMetric(0, "ns/op")
}

// startHeadless starts `corral serve --headless` in a fresh home and waits
// for its start-up lines.
func startHeadless(b testing.TB, bin string) *exec.Cmd {
	cmd := exec.Command(bin, "serve", "--headless", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CORRAL_HOME="+b.TempDir())
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for i := 0; i < 2 && sc.Scan(); i++ {
	}
	go io.Copy(io.Discard, stdout)
	return cmd
}

// cpuTicks is the user and system time pid has used, in clock ticks.
func cpuTicks(b testing.TB, pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing parenthesis (field 3, state, is first).
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}
