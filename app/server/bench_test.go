package server

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/client"
	"corral/app/internal/benchref"
)

// BenchmarkFileRead compares file.read of a 4 KiB file over one WebSocket
// connection with 32 requests in flight, audit on, against a bare
// gorilla/websocket server that only reads the same file and answers.
// The two take turns in rounds, so that a change in the machine's load
// (it is shared) falls on both alike; ratio is corral_ops/s over
// bare_ops/s (goal: ≥ 0.8). The process's CPU time per call in each
// side's rounds (client included, the same for both) is reported too:
// on a loaded machine it varies far less than the rates.
func BenchmarkFileRead(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB
	params := map[string]any{"path": "f.txt"}

	dir := b.TempDir()
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte(content), 0o644)
	bare, err := client.Dial(context.Background(), bareServer(b, file), "unused")
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()

	h := start(b, "")
	corral, err := client.Dial(context.Background(), h.url, aliceKey)
	if err != nil {
		b.Fatal(err)
	}
	defer corral.Close()
	if _, err := corral.Call(context.Background(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	const rounds = 8
	var bareSecs, corralSecs, bareCPU, corralCPU float64
	for i := range rounds {
		n := b.N/rounds + min(1, b.N%rounds/(i+1))
		if n == 0 {
			continue
		}
		cpu := selfCPU()
		bareSecs += float64(n) / inFlight(b, bare, n, params)
		cpu, bareCPU = selfCPU(), bareCPU+(selfCPU()-cpu).Seconds()
		corralSecs += float64(n) / inFlight(b, corral, n, params)
		corralCPU += (selfCPU() - cpu).Seconds()
	}
	b.ReportMetric(float64(b.N)/bareSecs, "bare_ops/s")
	b.ReportMetric(float64(b.N)/corralSecs, "corral_ops/s")
	b.ReportMetric(bareSecs/corralSecs, "ratio")
	b.ReportMetric(bareCPU/float64(b.N)*1e6, "bare_cpu_µs/op")
	b.ReportMetric(corralCPU/float64(b.N)*1e6, "corral_cpu_µs/op")
}

// inFlight makes n file.read calls with benchref.Depth in flight and
// returns the calls per second.
func inFlight(b *testing.B, c *client.Client, n int, params map[string]any) float64 {
	ops, err := benchref.InFlight(context.Background(), c, n, params)
	if err != nil {
		b.Fatal(err)
	}
	return ops
}

// bareServer is the reference (benchref.Bare) on a loopback port.
func bareServer(b *testing.B, file string) string {
	srv := &http.Server{Handler: benchref.Bare(file)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
