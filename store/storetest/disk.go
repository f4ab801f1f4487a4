// Package storetest holds what tests of the store and of the daemon share
// to put Corral's files on a disk that misbehaves: a small filesystem to
// fill. It is for tests only.
package storetest

import (
	"os"
	"os/exec"
	"testing"
)

// SmallDisk mounts a tmpfs of size (mount's size=, such as "64m") on a
// fresh folder for the test and returns the folder; it is unmounted when
// the test ends. It needs root: without it the test fails, or is skipped
// under -short.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if testing.Short() {
			t.Skip("mounting a small filesystem needs root; skipped under -short")
		}
		t.Fatal("mounting a small filesystem needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}
