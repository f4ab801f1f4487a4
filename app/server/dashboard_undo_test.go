package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/audit"
)

// The owner opens a command's event in real Chromium, sees what it
// changed (a diff for the text file, sizes for the binary one), presses
// Undo (twice: it asks for confirmation) and the files are back.
func TestDashboardUndoCommand(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	scope := filepath.Join(h.base, "alice")
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "first line\nsecond line\n"))
	bin := randomBytes(2000)
	if err := os.WriteFile(filepath.Join(scope, "data.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	rpcCall[any](t, alice, "command.run", m("command", "sed -i 's/second/agent/' notes.txt && head -c 500 /dev/urandom > data.bin && echo made > made.txt"))
	p, err := h.store.Query(context.Background(), audit.Filter{Limit: 1, Op: "command.run"})
	if err != nil || len(p.Events) != 1 || len(p.Events[0].Changes) != 3 {
		t.Fatalf("the command's event: %+v %v", p, err)
	}
	id := p.Events[0].ID

	b := newBrowser(t)
	b.loginAt(h, fmt.Sprintf("#event=%d", id))
	b.wait(`document.querySelector('#detail-changes pre.diff')?.textContent.includes('-agent line')`)
	text := js[string](b, `document.querySelector('#detail-changes').innerText`)
	for _, want := range []string{"WHAT IT CHANGED", "notes.txt", "+second line", "data.bin", "Binary file", "made.txt", "would be removed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the changes lack %q:\n%s", want, text)
		}
	}
	b.shot("undo-command-preview")
	b.click("#undo-event")
	b.wait(`document.querySelector('#undo-event').textContent.includes('Click again')`)
	b.click("#undo-event")
	b.wait(`document.querySelector('#detail-changes [role=status]').textContent.startsWith('Undone')`)
	if got, _ := os.ReadFile(filepath.Join(scope, "notes.txt")); string(got) != "first line\nsecond line\n" {
		t.Errorf("notes.txt after Undo: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(scope, "data.bin")); string(got) != string(bin) {
		t.Errorf("data.bin after Undo: %d bytes, not the original", len(got))
	}
	if _, err := os.Stat(filepath.Join(scope, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("made.txt still there: %v", err)
	}

	// Undoing again is a conflict now: said in plain words, nothing written.
	rpcCall[any](t, alice, "file.write", m("path", "made.txt", "content", "someone else\n"))
	b.hash("#activity")
	b.hash(fmt.Sprintf("#event=%d", id))
	b.wait(`document.querySelector('#detail-changes')?.innerText.includes('changed again after this event')`)
	b.click("#undo-event")
	b.click("#undo-event")
	b.wait(`document.querySelector('#detail-changes [role=status]').textContent.startsWith('Nothing was undone')`)
	if got, _ := os.ReadFile(filepath.Join(scope, "made.txt")); string(got) != "someone else\n" {
		t.Errorf("made.txt after a refused undo: %q", got)
	}
	b.noPageErrors()
}
