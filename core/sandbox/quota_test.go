package sandbox

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/paths"
)

// TestQuota: a scope folder at its quota takes no more writes, with a
// sentence that says so; deleting makes room again; another scope is not
// affected.
func TestQuota(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output", Home: dir},
		Users: []string{"alice", "bob"}, Audit: &memSink{}, Quota: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	big := strings.Repeat("x", 300<<10)
	if _, err := b.Write(ctx, alice, WriteArgs{Path: "big.txt", Content: big}); err != nil {
		t.Fatalf("the write that reaches the quota: %v", err)
	}
	_, err = b.Write(ctx, alice, WriteArgs{Path: "more.txt", Content: "x"})
	if e := errs.As(err); e.Kind != errs.TooLarge || !strings.Contains(e.Msg, "Your folder has reached its quota of 0.2 MiB") {
		t.Fatalf("over the quota: %v", err)
	}
	if _, err := b.Write(ctx, Caller{Client: "bob-agent", User: "bob"}, WriteArgs{Path: "b.txt", Content: "bob"}); err != nil {
		t.Errorf("another scope: %v", err)
	}
	if _, err := b.Delete(ctx, alice, DeleteArgs{Path: "big.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(ctx, alice, WriteArgs{Path: "more.txt", Content: "x"}); err != nil {
		t.Errorf("after making room: %v", err)
	}
}
