package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/testkit/auditmem"
	"corral/core/versions"
)

// An agent cannot make its own change unrecoverable by filling the
// version store. Here it deletes a file the owner cares about (its
// content is kept), then rewrites a few files of its own until the store
// is over its budget: the deleted file's version must still be there to
// restore. Today the oldest versions go first, so the churn evicts the
// very version that undoes the delete. Versions younger than a week are
// never removed to make room: the churn is refused instead.
func TestAgentCannotEvictVersionsItMade(t *testing.T) {
	dir := t.TempDir()
	vdir := filepath.Join(dir, "versions")
	box, err := Open(Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output"},
		Users: []string{"alice"}, Audit: &auditmem.Log{}, Versions: versions.Config{Dir: vdir, MaxBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	alice := Caller{Client: "a", User: "alice"}
	ctx := context.Background()
	precious := "five years of the owner's notes"
	if _, err := box.Write(ctx, alice, WriteArgs{Path: "thesis.txt", Content: precious}); err != nil {
		t.Fatal(err)
	}
	if _, err := box.Delete(ctx, alice, DeleteArgs{Path: "thesis.txt"}); err != nil {
		t.Fatal(err)
	}
	// Churn: each rewrite keeps 256 KiB of the file's previous content.
	// Once only young versions are left the store refuses more, and so
	// the rewrite does not happen.
	refused := 0
	for i := range 12 {
		body := strings.Repeat(fmt.Sprintf("%03d", i), 256<<10/3)
		_, err := box.Write(ctx, alice, WriteArgs{Path: fmt.Sprintf("churn%d.txt", i%3), Content: body})
		switch e := errs.As(err); {
		case err == nil:
		case e.Kind == errs.Unavailable && strings.Contains(e.Msg, "version store is full"):
			refused++
		default:
			t.Fatal(err)
		}
	}
	if refused == 0 {
		t.Error("12 rewrites of 256 KiB fit a 1 MiB store")
	}
	st, err := versions.Open(versions.Config{Dir: vdir, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	st.Prune() // whatever the store's own prune has not done yet
	if !st.Has(versions.Sum([]byte(precious))) {
		t.Errorf("the version that undoes the agent's delete of thesis.txt was pruned by the agent's own later writes (store: %+v)", st.Usage())
	}
}
