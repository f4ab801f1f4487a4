//go:build unix

package commands

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"corral/core/execbox"
	"corral/core/fsbox"
)

// TestAppliedChangesSettled: what a command's upper layer puts in place —
// new files, a file that replaced another, files in a new folder — has no
// setuid, setgid or (on a file) sticky bit, and is owned by Corral's uid
// and gid, even when the command made it setuid and as another user (as
// root, commands run as an unprivileged uid; see core/execbox). A rename
// keeps the inode's mode and owner, so without settling the upper layer's
// setuid file would be one on the host.
func TestAppliedChangesSettled(t *testing.T) {
	w := newWorld(t, nil)
	upper := filepath.Join(t.TempDir(), "u")
	files := map[string]fs.FileMode{
		"suid":        0o755 | fs.ModeSetuid,
		"sgid":        0o755 | fs.ModeSetgid,
		"sticky":      0o644 | fs.ModeSticky,
		"f.txt":       0o755 | fs.ModeSetuid | fs.ModeSetgid, // replaces the real f.txt
		"new/deep/id": 0o755 | fs.ModeSetuid,
	}
	for name, mode := range files {
		p := filepath.Join(upper, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if os.Getuid() == 0 {
			if err := os.Lchown(p, 2147483646, 2147483646); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil { // chown dropped the bits
				t.Fatal(err)
			}
		}
	}
	root, err := os.OpenRoot(w.rwRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dirs := map[string]fsbox.Dir{w.rwRoot: {Root: root, Prefix: "rw"}}
	o, err := w.box.Begin(t.Context(), alice, nil, "command.run")
	if err != nil {
		t.Fatal(err)
	}
	changes, failed, refused := w.cmds.applyLayers(o, []execbox.Layer{{Host: w.rwRoot, Upper: upper}}, dirs)
	if len(failed) != 0 || len(changes) == 0 || refused != nil {
		t.Fatalf("changes %+v, failed %v, refused %v", changes, failed, refused)
	}
	for name, mode := range files {
		fi, err := os.Lstat(filepath.Join(w.rwRoot, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := fi.Mode(); got&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || got.Perm() != mode.Perm() {
			t.Errorf("%s is %v on the host, want %v", name, got, mode.Perm())
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
			t.Errorf("%s is owned by %d:%d, want Corral's %d:%d", name, st.Uid, st.Gid, os.Getuid(), os.Getgid())
		}
	}
}
