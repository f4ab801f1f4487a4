//go:build linux

package load

import (
	"sync"
	"testing"
	"time"
)

// Busy loops beside it make Slowdown larger than on their own.
func TestSlowdownSeesBusyLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the CPU for a second; skipped under -short")
	}
	idle := Slowdown(100)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}
	time.Sleep(10 * time.Millisecond) // let the loops start; not a wait for a result
	busy := Slowdown(100)
	close(stop)
	wg.Wait()
	t.Logf("slowdown alone %.2f, beside 8 busy loops %.2f", idle, busy)
	if idle < 1 || busy < 2 || busy < idle {
		t.Errorf("slowdown alone %.2f, beside 8 busy loops %.2f: want at least 1, and at least 2 beside the loops", idle, busy)
	}
}
