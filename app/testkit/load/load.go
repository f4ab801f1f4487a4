//go:build linux

// Package load tells a test how loaded the machine is, for the few tests
// where a latency bound is the behaviour under test (an agent's flood
// must not hold up another agent): Slowdown measures how much less CPU
// this process gets than on an idle machine, and such a test scales its
// bounds and durations by it, so that it holds on a loaded machine while
// a regression (another agent's calls waiting for the whole flood) still
// fails it. Tests whose bound is not the behaviour under test should
// simply wait longer instead. It is for tests only, on Linux.
package load

import (
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Slowdown spins GOMAXPROCS goroutines, each on a thread of its own,
// for about 200 ms of wall time, and returns the CPU time an idle
// machine would have given those threads divided by what they got: about
// 1 on an idle machine, about 2.5 with three busy loops beside the test
// on two cores (the process's own busy goroutines count as load too). It
// is at least 1 and at most limit.
func Slowdown(limit float64) float64 {
	n := runtime.GOMAXPROCS(0)
	start := time.Now()
	var mu sync.Mutex
	var got time.Duration
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			before := threadTime()
			for time.Since(start) < 200*time.Millisecond {
			}
			d := threadTime() - before
			mu.Lock()
			got += d
			mu.Unlock()
		})
	}
	wg.Wait()
	want := time.Duration(n) * time.Since(start)
	if got <= 0 {
		return limit
	}
	return max(1, min(limit, float64(want)/float64(got)))
}

// threadTime is the CPU time the calling thread has used, user and
// system.
func threadTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
