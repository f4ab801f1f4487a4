package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/versions"
)

// One agent's full share of the version store refuses that agent's
// changes — write, edit, delete and move alike (apply_patch:
// core/applypatch) — with the share's sentence, and no other agent's or the owner's. Before shares,
// the first agent filled the whole store and every agent's changes were
// refused until its versions were a week old.
func TestFullShareRefusesOnlyItsAgent(t *testing.T) {
	w := newWorldWith(t, func(w *world, cfg *Config) {
		cfg.Versions = versions.Config{Dir: filepath.Join(w.private, "versions"), MaxBytes: 1 << 20} // shares of 256 KiB
	})
	ctx := context.Background()
	bob := Caller{Client: "bob-agent", User: "bob"}
	owner := Caller{Client: "owner", Owner: true}
	big := func(c Caller, name string, size int) string {
		t.Helper()
		body := strings.Repeat(fmt.Sprintf("%s %s\n", c.Client, name), size/len(c.Client+name+"  "))
		dir := filepath.Join(w.dir, "base", c.User)
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return body
	}
	refused := func(what string, err error) {
		t.Helper()
		if e := errs.As(err); !errors.Is(err, versions.ErrShareFull) || e.Kind != errs.Unavailable || !strings.Contains(e.Msg, "Your share of Corral's version store is full") {
			t.Errorf("%s over alice's share: %v, want the share's refusal", what, err)
		}
	}
	// Churn: each write keeps ~100 KiB; the third is over 256 KiB.
	first := -1
	for i := range 12 {
		big(alice, fmt.Sprint("churn", i), 100<<10)
		if _, err := w.box.Write(ctx, alice, WriteArgs{Path: fmt.Sprint("churn", i), Content: "x"}); err != nil {
			refused("file.write", err)
			first = i
			break
		}
	}
	if first != 2 {
		t.Errorf("alice's churn was first refused at write %d, want the third", first)
	}
	body := big(alice, "a.txt", 100<<10)
	_, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "x"})
	refused("file.write", err)
	_, err = w.box.Edit(ctx, alice, EditArgs{Path: "a.txt", OldText: new(string), NewText: new(string)})
	if err == nil {
		t.Error("an empty edit succeeded")
	}
	old, repl := "alice-agent a.txt\n", "changed\n"
	_, err = w.box.Edit(ctx, alice, EditArgs{Path: "a.txt", OldText: &old, NewText: &repl, ReplaceAll: true})
	refused("file.edit", err)
	_, err = w.box.Delete(ctx, alice, DeleteArgs{Path: "a.txt"})
	refused("file.delete", err)
	_, err = w.box.Move(ctx, alice, MoveArgs{From: "a.txt", To: "b.txt"})
	refused("file.move", err)
	if b, err := os.ReadFile(filepath.Join(w.dir, "base", "alice", "a.txt")); err != nil || string(b) != body {
		t.Errorf("a.txt after alice's refused changes: %d bytes, %v", len(b), err)
	}

	// Bob and the owner change what they like (bob within his own share:
	// 4 × 40 KiB); bob's versions are kept.
	var kept []string
	for _, name := range []string{"w", "e", "d", "m"} {
		kept = append(kept, versions.Sum([]byte(big(bob, name, 40<<10))))
	}
	line := "bob-agent e\n"
	steps := []error{
		second(w.box.Write(ctx, bob, WriteArgs{Path: "w", Content: "new"})),
		second(w.box.Edit(ctx, bob, EditArgs{Path: "e", OldText: &line, NewText: &repl, ReplaceAll: true})),
		second(w.box.Delete(ctx, bob, DeleteArgs{Path: "d"})),
		second(w.box.Move(ctx, bob, MoveArgs{From: "m", To: "m2"})),
		second(w.box.Write(ctx, owner, WriteArgs{Context: &Context{UserID: "alice"}, Path: "a.txt", Content: "the owner's"})),
	}
	for i, err := range steps {
		if err != nil {
			t.Errorf("step %d beside alice's full share: %v", i, err)
		}
	}
	for i, id := range kept {
		if !w.box.Versions().Has(id) {
			t.Errorf("bob's version %d is not kept", i)
		}
	}
}

func second[T any](_ T, err error) error { return err }
