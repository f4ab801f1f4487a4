package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/wire"
)

// changeAlice and changeBob give both agents files of their own and
// change them: alice through file operations and a command (a text file
// edited, a binary one rewritten, one deleted, one created), bob through
// file.write. It returns what the scopes held before.
func changeBoth(t *testing.T, h *harness) (alice, bob map[string]string) {
	t.Helper()
	a, b := h.dial(aliceKey), h.dial(bobKey)
	aScope, bScope := filepath.Join(h.base, "alice"), filepath.Join(h.base, "bob")
	rpcCall[any](t, a, "folder.list", m("path", ".")) // the scopes are made as they would be
	rpcCall[any](t, b, "folder.list", m("path", "."))
	for dir, files := range map[string]map[string]string{
		aScope: {"notes.txt": "first line\nsecond line\n", "data.bin": string(randomBytes(3000)), "old.txt": "keep me\n"},
		bScope: {"bob.txt": "bob's own\n"},
	} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	alice, bob = tree(t, aScope), tree(t, bScope)
	rpcCall[any](t, a, "file.write", m("path", "notes.txt", "content", "first line\nagent line\n"))
	rpcCall[any](t, a, "file.delete", m("path", "old.txt"))
	rpcCall[any](t, a, "command.run", m("command", "head -c 700 /dev/urandom > data.bin && echo made > made.txt"))
	rpcCall[any](t, b, "file.write", m("path", "bob.txt", "content", "bob changed it\n"))
	rpcCall[any](t, b, "file.write", m("path", "bob-new.txt", "content", "new\n"))
	return alice, bob
}

// undo.client's until bounds the range: changes at or after it are not
// listed; versions.usage says when the oldest kept version was stored.
func TestUndoClientUntil(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	own := h.dial(ownerToken)
	changeBoth(t, h)
	hourAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	all := rpcCall[wire.UndoClientResult](t, own, "undo.client", m("client", "alice-agent", "since", hourAgo, "dry_run", true))
	if len(all.Events) != 3 {
		t.Fatalf("alice's changes in the last hour: %+v", all.Events)
	}
	for _, ev := range all.Events {
		if ev.User != "alice" || ev.Time.IsZero() {
			t.Errorf("event %d names scope %q, time %v", ev.EventID, ev.User, ev.Time)
		}
		for _, f := range ev.Files {
			if (f.Kind == "created") != (f.Version == "") {
				t.Errorf("%s (%s) version %q", f.Path, f.Kind, f.Version)
			}
		}
	}
	before := time.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	none := rpcCall[wire.UndoClientResult](t, own, "undo.client", m("client", "alice-agent", "since", hourAgo, "until", before, "dry_run", true))
	if len(none.Events) != 0 {
		t.Errorf("changes before half an hour ago: %+v", none.Events)
	}
	u := rpcCall[wire.Usage](t, own, "versions.usage", nil)
	if u.Blobs == 0 || u.Oldest.IsZero() || time.Since(u.Oldest) > time.Minute {
		t.Errorf("usage: %+v", u)
	}
}

// The owner opens "What changed" for one agent in real Chromium: only
// that agent's files are listed (a diff for text, sizes for binary), and
// "Undo all of these" (two clicks) puts every one back byte for byte,
// leaving the other agent's files as they are.
func TestDashboardWhatChanged(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	aliceBefore, _ := changeBoth(t, h)
	aScope, bScope := filepath.Join(h.base, "alice"), filepath.Join(h.base, "bob")
	bobAfter := tree(t, bScope)

	b := newBrowser(t)
	b.login(h)
	b.openTab("changes")
	b.choose("#wc-agent", "alice-agent")
	b.wait(`location.hash === '#changes?client=alice-agent&range=today'`)
	b.wait(`document.body.dataset.changesReady && !!document.querySelector('#wc-list pre.diff')`)
	b.wait(`/Kept versions: .* of .*oldest from.* alice-agent's versions take .* of its .* share\./.test(document.querySelector('#versions-usage').textContent)`)
	text := js[string](b, `document.querySelector('#view-changes').innerText`)
	for _, want := range []string{"alice-agent changed 4 files in 3 calls", "notes.txt", "+second line", "-agent line", "data.bin", "Binary file", "old.txt", "deleted", "made.txt", "undoing removes it"} {
		if !strings.Contains(text, want) {
			t.Errorf("the view lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"bob.txt", "bob-new.txt", "null", "undefined"} {
		if strings.Contains(text, not) {
			t.Errorf("alice's changes list bob's %s:\n%s", not, text)
		}
	}
	if n := js[int](b, `document.querySelectorAll('#wc-list button').length`); n != 4 { // Undo all, and one Undo for each of the 3 calls
		t.Errorf("%d buttons in the list, want 4", n)
	}
	b.shot("what-changed")

	b.click("#wc-undo")
	b.wait(`document.querySelector('#wc-undo').textContent.includes('Click again')`)
	if _, err := os.Stat(filepath.Join(aScope, "made.txt")); err != nil {
		t.Fatalf("one click undid already: %v", err)
	}
	b.click("#wc-undo")
	b.wait(`document.querySelector('#wc-status').textContent.startsWith('Undone')`)
	after := tree(t, aScope)
	if strings.HasPrefix(after["share"], "-> ") {
		delete(after, "share") // the link to /share commands get in $HOME, made by Corral
	}
	sameTree(t, "alice's folder after Undo all", after, aliceBefore)
	if _, err := os.Stat(filepath.Join(aScope, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("made.txt still there: %v", err)
	}
	sameTree(t, "bob's folder after alice's undo", tree(t, bScope), bobAfter)

	// Bob's view lists his; one call's Undo puts its file back on its own.
	b.choose("#wc-agent", "bob-agent")
	b.wait(`location.hash.includes('client=bob-agent') && document.body.dataset.changesReady && document.querySelector('#wc-list')?.innerText.includes('bob-new.txt')`)
	if text := js[string](b, `document.querySelector('#wc-list').innerText`); strings.Contains(text, "notes.txt") {
		t.Errorf("bob's changes list alice's files:\n%s", text)
	}
	bobUndo := `#wc-list li.wc-event:has(li.change[data-path="bob.txt"]) .wc-undo-event`
	b.click(bobUndo)
	b.click(bobUndo)
	b.wait(`document.querySelector('#wc-status').textContent.includes('Undone: 1 file put back') && !document.querySelector(` + jsString(bobUndo) + `)`)
	if got, _ := os.ReadFile(filepath.Join(bScope, "bob.txt")); string(got) != "bob's own\n" {
		t.Errorf("bob.txt after Restore: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(bScope, "bob-new.txt")); string(got) != "new\n" {
		t.Errorf("bob-new.txt after restoring bob.txt: %q", got)
	}

	// bob.txt is as it was before bob's write now; bob-new.txt changed on
	// the host since bob made it: a conflict, in words.
	if err := os.WriteFile(filepath.Join(bScope, "bob-new.txt"), []byte("the owner's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.choose("#wc-range", "1h")
	b.wait(`document.body.dataset.changesReady && document.querySelector('#wc-list li.change.conflict[data-path="bob-new.txt"]')?.innerText.includes('changed after this event')`)
	if s := js[string](b, `document.querySelector('#wc-list li.change[data-path="bob.txt"]').innerText`); !strings.Contains(s, "already as it was") {
		t.Errorf("bob.txt after its restore: %q", s)
	}
	if s := js[string](b, `document.querySelector('#wc-summary').textContent`); !strings.Contains(s, "1 file changed again since") {
		t.Errorf("the summary with a conflict: %q", s)
	}
	b.click("#wc-undo")
	b.click("#wc-undo")
	b.wait(`document.querySelector('#wc-status').textContent.startsWith('Nothing was undone')`)
	if got, _ := os.ReadFile(filepath.Join(bScope, "bob-new.txt")); string(got) != "the owner's own\n" {
		t.Errorf("bob-new.txt after a refused undo: %q", got)
	}

	// Yesterday: nothing.
	b.choose("#wc-range", "yesterday")
	b.wait(`document.body.dataset.changesReady && document.querySelector('#wc-summary').textContent.includes('changed no files yesterday')`)
	b.labelled()
	b.noPageErrors()
}
