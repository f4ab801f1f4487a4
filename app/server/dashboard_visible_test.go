package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The dashboard shows an agent's control characters, ANSI sequences and
// bidi overrides as escapes, in the activity table and in file listings,
// never as themselves (which would reorder or hide what the owner reads).
func TestDashboardShowsAgentTextSafely(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	callErr(t, alice, "file.read", m("path", "notes/\x1b[31minvoice_\u202efdp.exe"))
	// A command can name a file anything; the owner's listing shows it.
	rpcCall[any](t, alice, "file.write", m("path", "notes/a.txt", "content", "x"))
	if err := os.WriteFile(filepath.Join(h.base, "alice", "report\u202eexe.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	b.login(h)
	b.wait(`[...document.querySelectorAll('#audit-table .t-target')].some(td => td.textContent.includes('invoice'))`)
	target := js[string](b, `[...document.querySelectorAll('#audit-table .t-target')].find(td => td.textContent.includes('invoice')).textContent`)
	if target != `notes/\x1b[31minvoice_\u202efdp.exe` {
		t.Errorf("activity target shown as %q", target)
	}
	b.hash("#files?place=alice")
	b.wait(`[...document.querySelectorAll('#listing .entry')].some(li => li.textContent.includes('report'))`)
	name := js[string](b, `[...document.querySelectorAll('#listing .entry')].find(li => li.textContent.includes('report')).querySelector('.name').textContent`)
	if !strings.Contains(name, `report\u202eexe.txt`) {
		t.Errorf("file name shown as %q", name)
	}
	for _, view := range []string{"#activity", "#files?place=alice"} {
		b.hash(view)
		text := js[string](b, `document.body.innerText + [...document.querySelectorAll('[title]')].map(e => e.title).join(' ')`)
		if strings.ContainsAny(text, "\x1b\u202e") {
			t.Errorf("%s shows hidden characters as themselves", view)
		}
	}
	b.noPageErrors()
}
