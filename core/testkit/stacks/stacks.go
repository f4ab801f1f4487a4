// Package stacks is test support that watches the goroutines of the
// test's own process: how many are inside a function at once, to check
// that a bound on concurrent work holds.
package stacks

import (
	"bytes"
	"runtime"
	"sync"
)

// Inside counts the goroutines of this process whose stack holds frame
// (a function's name as runtime.Stack prints it) at this instant.
func Inside(frame string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte(frame))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// MostAtOnce runs call n times at once and returns the most goroutines
// seen inside frame meanwhile.
func MostAtOnce(n int, frame string, call func()) int {
	stop := make(chan struct{})
	var most int
	var watch sync.WaitGroup
	watch.Go(func() {
		for {
			most = max(most, Inside(frame))
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	})
	var calls sync.WaitGroup
	for range n {
		calls.Go(call)
	}
	calls.Wait()
	close(stop)
	watch.Wait()
	return most
}
