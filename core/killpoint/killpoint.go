// Package killpoint lets a fault test kill Corral at a named moment of a
// change, deterministically: with CORRAL_KILL_AT=name (or name:N, the Nth
// time) in its environment, the process sends itself SIGKILL when it
// reaches Here(name). Without the variable, Here does nothing but one
// atomic load.
//
// The points are where a crash would leave a change half-done if Corral
// did not journal it: after a change's intent is recorded and before the
// change (change.before), after the change and before its event is
// completed (change.after), in the middle of writing an appended file
// (write.partial), between a patch's staged files and its renames
// (patch.staged) and after each rename (patch.commit), after each file a
// command's apply puts in place (apply.file), when a command has ended and
// its changes are not applied yet (command.ended), after each change
// Recover puts back at start-up (recover.change: a crash while
// recovering), after each change of the owner's undo (undo.change), in
// each store migration's transaction before its work (migrate.begin) and
// before its commit (migrate.commit), and after it commits (migrate.done),
// when a config file's temporary copy is synced and not yet renamed into
// place (config.rename), and after each rule the store saves (rule.saved;
// inside the transaction of a rule.import).
//
// Not guaranteed: nothing; this is a test hook. It reads the environment
// once, when the program starts.
package killpoint

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

var (
	point string
	nth   int64 = 1
	hits  atomic.Int64
	armed atomic.Bool
)

func init() {
	v := os.Getenv("CORRAL_KILL_AT")
	if v == "" {
		return
	}
	name, n, ok := strings.Cut(v, ":")
	if ok {
		if k, err := strconv.ParseInt(n, 10, 64); err == nil && k > 0 {
			nth = k
		}
	}
	point = name
	armed.Store(true)
}

// Here kills the process with SIGKILL when it is the armed point's Nth
// hit.
func Here(name string) {
	if !armed.Load() || name != point {
		return
	}
	if hits.Add(1) == nth {
		killSelf()
		select {} // the signal is on its way
	}
}
