package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"corral/app/client"
	"corral/app/internal/benchref"
)

// BenchmarkFileReadOutOfProcess is BenchmarkFileRead (app/server) measured
// from outside: a separate client process drives the real daemon (`corral
// serve`, audit on) and the bare gorilla server (benchref.Bare) in its own
// process, alternating in four rounds, with b.N file.read calls
// of a 4 KiB file each, 32 in flight over one connection. ratio is
// corral_ops/s over bare_ops/s (goal: ≥ 0.8).
//
// The helper processes are this test binary run again with one of the
// helper tests below selected.
func BenchmarkFileReadOutOfProcess(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB
	r := startServeUnlimited(b)
	c, err := client.Dial(b.Context(), r.url, r.agentKey)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Call(b.Context(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
		b.Fatal(err)
	}
	c.Close()

	file := filepath.Join(b.TempDir(), "f.txt")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	bare := helper(b, "TestHelperBareServer", "CORRAL_BENCH_FILE="+file)
	bareURL := readLine(b, bare)
	b.Cleanup(func() { bare.Process.Kill(); bare.Wait() })

	b.ResetTimer()
	// Alternate in rounds, so that a change in the machine's load (it is
	// shared) falls on both alike.
	const rounds = 4
	var bareSecs, corralSecs float64
	for i := range rounds {
		n := b.N/rounds + min(1, b.N%rounds/(i+1))
		if n == 0 {
			continue
		}
		bareSecs += float64(n) / clientRun(b, bareURL, "unused", n)
		corralSecs += float64(n) / clientRun(b, r.url, r.agentKey, n)
	}
	b.ReportMetric(float64(b.N)/bareSecs, "bare_ops/s")
	b.ReportMetric(float64(b.N)/corralSecs, "corral_ops/s")
	b.ReportMetric(bareSecs/corralSecs, "ratio")
}

// helper is this test binary, set to run only the helper test name, with
// env added; its stdout is a pipe.
func helper(b *testing.B, name string, env ...string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// readLine starts cmd and returns the first line it prints.
func readLine(b *testing.B, cmd *exec.Cmd) string {
	b.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("%s: %v", cmd.Args, err)
	}
	return strings.TrimSpace(line)
}

// clientRun runs the client process against url and returns its ops/s.
func clientRun(b *testing.B, url, key string, n int) float64 {
	b.Helper()
	cmd := helper(b, "TestHelperFileReadClient", "CORRAL_BENCH_URL="+url, "CORRAL_BENCH_KEY="+key, "CORRAL_BENCH_N="+strconv.Itoa(n))
	line := readLine(b, cmd)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("client against %s: %v", url, err)
	}
	ops, err := strconv.ParseFloat(strings.TrimPrefix(line, "ops/s "), 64)
	if err != nil {
		b.Fatalf("client against %s said %q", url, line)
	}
	return ops
}

// TestHelperBareServer is the bare reference server process of
// BenchmarkFileReadOutOfProcess: it prints its URL and serves until
// killed. Run on its own, it does nothing.
func TestHelperBareServer(t *testing.T) {
	t.Parallel()
	file := os.Getenv("CORRAL_BENCH_FILE")
	if file == "" {
		t.Skip("a helper process of BenchmarkFileReadOutOfProcess")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	t.Fatal(http.Serve(ln, benchref.Bare(file)))
}

// TestHelperFileReadClient is the client process of
// BenchmarkFileReadOutOfProcess: it makes CORRAL_BENCH_N file.read calls
// and prints "ops/s N". Run on its own, it does nothing.
func TestHelperFileReadClient(t *testing.T) {
	t.Parallel()
	url := os.Getenv("CORRAL_BENCH_URL")
	if url == "" {
		t.Skip("a helper process of BenchmarkFileReadOutOfProcess")
	}
	n, _ := strconv.Atoi(os.Getenv("CORRAL_BENCH_N"))
	c, err := client.Dial(context.Background(), url, os.Getenv("CORRAL_BENCH_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ops, err := benchref.InFlight(context.Background(), c, n, map[string]any{"path": "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ops/s %f\n", ops)
}
