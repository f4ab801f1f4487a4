package store

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/audit"
)

// TestRecordPromptUnderBusyCPU: with goroutines busy on the CPU (an
// agent's pathological patch search runs this way) and another agent's
// events arriving all the time, one event's Record must not wait for the
// writer to yield its turn many times over to gather a bigger batch:
// each yield then costs the busy goroutines' time slices. Before, the
// writer yielded up to 16 times per batch while events kept coming.
func TestRecordPromptUnderBusyCPU(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Busy goroutines: twice as many as there are Ps, never blocking.
	var sink atomic.Int64
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			x := int64(0)
			for ctx.Err() == nil {
				for i := range 1 << 16 {
					x += int64(i) ^ x
				}
			}
			sink.Add(x)
		})
	}
	// Another agent's flood: 32 recorders at once, without pause.
	for range 32 {
		wg.Go(func() {
			for ctx.Err() == nil {
				s.Record(ctx, audit.Event{Client: "flood", Op: "file.stat", Target: "x", Decision: audit.Allow})
			}
		})
	}
	var lat []time.Duration
	for range 50 {
		start := time.Now()
		if _, err := s.Record(context.Background(), audit.Event{Client: "probe", Op: "file.read", Target: "f.txt", Decision: audit.Allow}); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	cancel()
	slices.Sort(lat)
	p50, p95 := lat[len(lat)/2], lat[len(lat)*95/100]
	t.Logf("probe Record under busy CPU and a flood: p50 %v, p95 %v, max %v", p50, p95, lat[len(lat)-1])
	// Measured on a shared 2-core machine: before, p50 180–460 ms and p95
	// 1.0–1.1 s (the red team's "p95 0.9–1.05 s"); now p50 0.06–80 ms and
	// p95 200–320 ms.
	if p95 > 700*time.Millisecond {
		t.Errorf("probe Record p95 %v under busy CPU, want < 700ms (p50 %v)", p95, p50)
	}
}
