package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"corral/core/paths"
	"corral/core/testkit/auditmem"
	"corral/core/versions"
)

// BenchmarkWriteVersions compares file.write of 4 KiB over an existing
// file with the version store (the old content kept, the change recorded)
// and without it, in one run, alternating. Goal: with ≥ 0.7× the speed
// without (ratio = with_µs / without_µs ≤ 1.43).
func BenchmarkWriteVersions(b *testing.B) {
	open := func(keep bool) *Sandbox {
		dir := b.TempDir()
		cfg := Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output"}, Users: []string{"alice"}, Audit: &auditmem.Log{}}
		if keep {
			cfg.Versions = versions.Config{Dir: filepath.Join(dir, "versions")}
		}
		box, err := Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { box.Close() })
		return box
	}
	with, without := open(true), open(false)
	alice := Caller{Client: "a", User: "alice"}
	ctx := context.Background()
	content := make([]byte, 4<<10)
	var tw, to time.Duration
	n := 0
	for b.Loop() {
		for i := range content {
			content[i] = byte('a' + (n+i)%26)
		}
		a := WriteArgs{Path: fmt.Sprintf("f%d.txt", n%16), Content: string(content)}
		t0 := time.Now()
		if _, err := with.Write(ctx, alice, a); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := without.Write(ctx, alice, a); err != nil {
			b.Fatal(err)
		}
		tw += t1.Sub(t0)
		to += time.Since(t1)
		n++
	}
	w, o := float64(tw.Microseconds())/float64(n), float64(to.Microseconds())/float64(n)
	b.ReportMetric(w, "with_µs")
	b.ReportMetric(o, "without_µs")
	b.ReportMetric(o/w, "speed_ratio")
}
