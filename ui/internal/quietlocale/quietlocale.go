// Package quietlocale keeps one start-up message of Fyne off stderr: with
// the C or POSIX locale, or none (usual for services, CI and LANG=C),
// Fyne's lang package logs "Error parsing user locale" (or "Failed to look
// up user locale") from its init function, so every command of the binary
// — `corral call` included — would print three lines of noise before doing
// anything. Fyne then falls back to English, which is all we need.
//
// How: this package's init installs a filter on the standard logger that
// drops exactly those messages, and Done (called from package ui's init,
// after Fyne's) puts the logger back. Go initialises packages in import
// path order as soon as their imports are ready (Go 1.21+); this package
// imports only the standard library and "corral/…" sorts before
// "fyne.io/…", so its init runs before Fyne's.
//
// Not done: other Fyne messages pass untouched, and nothing is filtered
// after Done.
package quietlocale

import (
	"bytes"
	"io"
	"log"
	"sync"
)

var (
	mu   sync.Mutex
	prev io.Writer
)

func init() {
	prev = log.Writer()
	log.SetOutput(&filter{w: prev})
}

// Done restores the standard logger's writer.
func Done() {
	mu.Lock()
	defer mu.Unlock()
	if prev != nil {
		log.SetOutput(prev)
		prev = nil
	}
}

// filter drops Fyne's locale complaint and its "Cause:" and "At:" lines.
// The standard logger writes one line per Write.
type filter struct {
	w    io.Writer
	skip int
}

func (f *filter) Write(p []byte) (int, error) {
	switch {
	case bytes.Contains(p, []byte("Fyne error:")) &&
		(bytes.Contains(p, []byte("user locale"))):
		f.skip = 2
		return len(p), nil
	case f.skip > 0 && (bytes.Contains(p, []byte("  Cause:")) || bytes.Contains(p, []byte("  At:"))):
		f.skip--
		return len(p), nil
	}
	f.skip = 0
	return f.w.Write(p)
}
