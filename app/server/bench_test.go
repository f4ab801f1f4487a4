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
// Compare the ops/s metrics of the two sub-benchmarks (goal: corral ≥ 0.8×
// bare).
func BenchmarkFileRead(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64) // 4 KiB

	b.Run("bare", func(b *testing.B) {
		dir := b.TempDir()
		file := filepath.Join(dir, "f.txt")
		os.WriteFile(file, []byte(content), 0o644)
		url := bareServer(b, file)
		c, err := client.Dial(context.Background(), url, "unused")
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		inFlight(b, c, map[string]any{"path": "f.txt"})
	})

	b.Run("corral", func(b *testing.B) {
		h := start(b, "")
		c, err := client.Dial(context.Background(), h.url, aliceKey)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Call(context.Background(), "file.write", map[string]any{"path": "f.txt", "content": content}); err != nil {
			b.Fatal(err)
		}
		inFlight(b, c, map[string]any{"path": "f.txt"})
	})
}

// inFlight runs b.N file.read calls with benchref.Depth in flight and
// reports ops/s.
func inFlight(b *testing.B, c *client.Client, params map[string]any) {
	b.ResetTimer()
	ops, err := benchref.InFlight(context.Background(), c, b.N, params)
	if err != nil {
		b.Error(err)
	}
	b.ReportMetric(ops, "ops/s")
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
