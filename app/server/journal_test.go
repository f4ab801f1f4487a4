package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"corral/app/wire"
	"corral/core/audit"
)

// Folders a command makes are changes of its event (mkdir -p gave
// changes: [] before), and undoing the command removes them while they
// are empty.
func TestCommandFoldersRecorded(t *testing.T) {
	t.Parallel()
	_, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "command.run", m("command", "true"))
	res := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "mkdir -p d/e/f && mkdir g"))
	if res.ExitCode != 0 {
		t.Fatalf("command: %+v", res)
	}
	var made []string
	for _, c := range res.Changes {
		if c.Kind == audit.Created {
			made = append(made, c.Path)
		}
	}
	slices.Sort(made)
	if want := []string{"d", "d/e", "d/e/f", "g"}; !slices.Equal(made, want) {
		t.Fatalf("command.run's changes: %+v, want the folders %v created", res.Changes, want)
	}
	ev := lastEvent(t, own, "command.run")
	r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID))
	if !r.Applied || r.Conflicts != 0 {
		t.Fatalf("undo: %+v", r)
	}
	for _, d := range []string{"d", "g"} {
		if _, err := os.Lstat(filepath.Join(scope, d)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the undo: %v", d, err)
		}
	}
}

// With the version store removed behind Corral's back, versions.usage no
// longer reports what is gone, and the next change makes the store again
// and keeps what it replaces there: a command's change is applied with
// its old content kept, so undoing it works (before, the change was
// applied, its old content lost and the agent told it was not).
func TestCommandVersionStoreGone(t *testing.T) {
	t.Parallel()
	h, alice, own, scope := startAlice(t)
	rpcCall[any](t, alice, "command.run", m("command", "true"))
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "original\n"))
	rpcCall[any](t, alice, "file.write", m("path", "keep.txt", "content", "second\n"))
	if u := rpcCall[wire.Usage](t, own, "versions.usage", nil); u.Blobs == 0 {
		t.Fatalf("versions.usage before: %+v", u)
	}
	if err := os.RemoveAll(h.files.VersionsDir()); err != nil {
		t.Fatal(err)
	}
	if u := rpcCall[wire.Usage](t, own, "versions.usage", nil); u.Blobs != 0 || u.Bytes != 0 || len(u.Agents) != 0 {
		t.Errorf("versions.usage with the store gone: %+v", u)
	}
	res := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo changed > keep.txt; echo new > new.txt"))
	if res.NotApplied != nil || len(res.Changes) != 2 {
		t.Fatalf("command.run after the store was removed: not_applied %+v, changes %+v", res.NotApplied, res.Changes)
	}
	if u := rpcCall[wire.Usage](t, own, "versions.usage", nil); u.Blobs != 1 {
		t.Errorf("versions.usage after the store was made again: %+v (want the one version kept since)", u)
	}
	ev := lastEvent(t, own, "command.run")
	if r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", ev.ID)); !r.Applied || r.Conflicts != 0 {
		t.Fatalf("undo of the command: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(scope, "keep.txt")); string(b) != "second\n" {
		t.Errorf("keep.txt holds %q after the undo, want its old content", b)
	}
	if _, err := os.Lstat(filepath.Join(scope, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt is still there after the undo: %v", err)
	}
}

// BenchmarkFileWriteJournaled is file.write of 4 KiB over an existing
// file, one call at a time and 32 in flight, through the real store: the
// journal commits each write's event twice (pending, then completed).
func BenchmarkFileWriteJournaled(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64)
	h := start(b, "")
	c := h.dial(aliceKey)
	ctx := context.Background()
	for _, inflight := range []int{1, 32} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			var wg sync.WaitGroup
			next := make(chan int)
			for w := range inflight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						if _, err := c.Call(ctx, "file.write", map[string]any{"path": fmt.Sprintf("w%d.txt", w), "content": content + strconv.Itoa(i)}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			for i := 0; b.Loop(); i++ {
				next <- i
			}
			close(next)
			wg.Wait()
		})
	}
}
