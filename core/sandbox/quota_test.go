package sandbox

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/testkit/auditmem"
)

// TestQuota: a scope folder at its quota takes no more writes, with a
// sentence that says so; deleting makes room again; another scope is not
// affected.
func TestQuota(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output", Home: dir},
		Users: []string{"alice", "bob"}, Audit: &auditmem.Log{}, Quota: 256 << 10})
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

// TestQuotaMeasureHoldsNoOne: while one scope's folder is being measured
// (a large folder takes a while to walk), a write in another scope goes
// ahead.
func TestQuotaMeasureHoldsNoOne(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output", Home: dir},
		Users: []string{"alice", "bob"}, Audit: &auditmem.Log{}, Quota: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	walking, release := make(chan struct{}), make(chan struct{})
	var started atomic.Bool
	b.usage.measure = func(d string) int64 {
		if started.CompareAndSwap(false, true) { // alice's folder, measured first
			close(walking)
			<-release
		}
		return folderSize(d)
	}
	ctx := context.Background()
	aliceDone := make(chan error, 1)
	go func() {
		_, err := b.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "a"})
		aliceDone <- err
	}()
	select {
	case <-walking:
	case err := <-aliceDone:
		t.Fatalf("alice's write did not measure her folder: %v", err)
	}
	bobDone := make(chan error, 1)
	go func() {
		_, err := b.Write(ctx, Caller{Client: "bob-agent", User: "bob"}, WriteArgs{Path: "b.txt", Content: "b"})
		bobDone <- err
	}()
	select {
	case err := <-bobDone:
		if err != nil {
			t.Errorf("bob's write: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("bob's write waited for alice's folder to be measured")
	}
	close(release)
	if err := <-aliceDone; err != nil {
		t.Errorf("alice's write: %v", err)
	}
}
