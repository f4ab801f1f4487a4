package testhost

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Chromium aborts the requests it has in flight when an address appears
// on or leaves one of this machine's interfaces (ERR_NETWORK_CHANGED):
// a dashboard page loading while a test host's pair came or went was
// left without its scripts, at "Connecting…" for good (15 of 15 loads
// with a pair added and removed in a loop, 0 of 15 without). So the
// changes Start and its cleanup make to this machine's interfaces wait
// for the tests that hold Quiet, across test processes, and tests that
// want Quiet wait while a change waits (a writer is not starved).

// lockFiles are the two files of the lock: intent, held exclusively by
// a change while it waits and briefly by a Quiet taker, and net, shared
// by the Quiet tests and exclusive to a change.
func lockFiles() (intent, net string) {
	return filepath.Join(os.TempDir(), "corral-testhost-intent.lock"), filepath.Join(os.TempDir(), "corral-testhost-net.lock")
}

// flock opens path and takes how on it, trying until the deadline; nil
// and the reason if it could not.
func flock(path string, how int, deadline time.Time) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockWait is how long a change or a Quiet test waits for the other:
// longer than any browser test, shorter than the suite's timeout. A test
// that holds Quiet and starts a host waits for itself, and fails here.
const lockWait = 3 * time.Minute

// Quiet keeps this machine's interfaces as they are until t ends: a
// test host's pair is neither added nor removed meanwhile. Browser tests
// hold it; a test that holds it must not call Start.
func Quiet(t testing.TB) {
	t.Helper()
	net, err := lockNet(unix.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
}

// changing runs change while no test holds Quiet.
func changing(t testing.TB, change func()) {
	t.Helper()
	if err := whileQuiet(change); err != nil {
		t.Fatal(err)
	}
}

// whileQuiet runs change while no test holds Quiet, or says why it could not.
func whileQuiet(change func()) error {
	net, err := lockNet(unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer net.Close()
	change()
	return nil
}

// lockNet takes the net lock, shared (Quiet) or exclusive (a change),
// through the intent lock: while a change waits for the Quiet tests to
// end, no new one starts.
func lockNet(how int) (*os.File, error) {
	intentPath, netPath := lockFiles()
	deadline := time.Now().Add(lockWait)
	intent, err := flock(intentPath, unix.LOCK_EX, deadline)
	if err != nil {
		return nil, fmt.Errorf("testhost: waited %v for the interfaces' lock: %v", lockWait, err)
	}
	defer intent.Close()
	net, err := flock(netPath, how, deadline)
	if err != nil {
		return nil, fmt.Errorf("testhost: waited %v for the interfaces' lock (does a test that holds Quiet start a host?): %v", lockWait, err)
	}
	return net, nil
}
