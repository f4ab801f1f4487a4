package quietlocale

import (
	"bytes"
	"log"
	"testing"
)

func TestFilter(t *testing.T) {
	var out bytes.Buffer
	l := log.New(&filter{w: &out}, "", 0)
	l.Println("Fyne error:  Error parsing user locale C")
	l.Println("  Cause: language: tag is not well-formed")
	l.Println("  At: /fyne/lang/locale.go:35")
	l.Println("Fyne error:  Failed to look up user locale")
	l.Println("  At: /fyne/lang/locale.go:15")
	l.Println("Fyne error:  window creation error")
	l.Println("  Cause: no display")
	l.Println("systray error: failed to register")
	want := "Fyne error:  window creation error\n  Cause: no display\nsystray error: failed to register\n"
	if out.String() != want {
		t.Errorf("filtered log:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestDoneRestores(t *testing.T) {
	// ui's init has called Done in the binary; here nothing has, so the
	// filter is still installed from this package's init.
	if _, ok := log.Writer().(*filter); !ok {
		t.Skip("the standard logger was changed before this test")
	}
	Done()
	if _, ok := log.Writer().(*filter); ok {
		t.Error("Done left the filter installed")
	}
	Done() // harmless twice
}
