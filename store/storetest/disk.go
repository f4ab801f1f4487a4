// Package storetest holds what tests of the store and of the daemon share
// to put Corral's files on a disk that misbehaves: a small filesystem to
// fill, a folder whose files can be made immutable. It is for tests only.
package storetest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
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

// DiskDir is a fresh folder on the real disk, under /var/tmp (tmpfs, where
// TMPDIR may point, has no immutable flag), removed when the test ends.
// Making its files immutable (Chattr) needs root: without it the test
// fails, or is skipped under -short.
func DiskDir(t testing.TB, prefix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if testing.Short() {
			t.Skip("chattr +i needs root; skipped under -short")
		}
		t.Fatal("chattr +i needs root (CI runs as root)")
	}
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Chattr runs chattr flag (such as "+i" or "-i") on files; its error
// carries chattr's own words.
func Chattr(flag string, files ...string) error {
	out, err := exec.Command("chattr", append([]string{flag}, files...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("chattr %s: %w: %s", flag, err, strings.TrimSpace(string(out)))
	}
	return nil
}
