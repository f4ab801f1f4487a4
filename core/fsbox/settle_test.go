package fsbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestNoSpecialBitsKept: Move renames, which keeps an inode's mode, so a
// setuid, setgid or sticky file moved inside an agent's folder loses those
// bits (a folder keeps only its sticky bit); Write, which replaces a file
// keeping its permission bits, never keeps them either.
func TestNoSpecialBitsKept(t *testing.T) {
	dir := t.TempDir()
	modes := map[string]fs.FileMode{
		"suid":   0o755 | fs.ModeSetuid,
		"sgid":   0o750 | fs.ModeSetgid,
		"sticky": 0o644 | fs.ModeSticky,
		"both":   0o700 | fs.ModeSetuid | fs.ModeSetgid,
		"dir/":   0o755 | fs.ModeDir | fs.ModeSetgid | fs.ModeSticky,
	}
	for name, mode := range modes {
		p := filepath.Join(dir, name)
		var err error
		if mode.IsDir() {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte("x"), 0o644)
		}
		if err == nil {
			err = os.Chmod(p, mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	d := Dir{Root: root, Prefix: "home"}
	for name, mode := range modes {
		to := "moved-" + filepath.Base(name)
		if err := Move(d, name, d, to); err != nil {
			t.Fatalf("Move %s: %v", name, err)
		}
		fi, err := os.Lstat(filepath.Join(dir, to))
		if err != nil {
			t.Fatal(err)
		}
		want := mode &^ (fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if mode.IsDir() {
			want |= fs.ModeSticky
		}
		if fi.Mode() != want {
			t.Errorf("moved %s is %v, want %v", name, fi.Mode(), want)
		}
	}
	// Write over a setuid file keeps 0755, not the bit.
	p := filepath.Join(dir, "w")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|fs.ModeSetuid|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write("w", []byte("y"), false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode() != 0o755 {
		t.Errorf("written w is %v, %v; want -rwxr-xr-x", fi.Mode(), err)
	}
}

// TestAppendClearsSpecialBits: appending writes the file in place, and
// Corral running as root (CAP_FSETID) keeps a setuid or setgid bit the
// kernel would clear for anyone else. The red team appended to a
// setuid-root copy of id through file.write {append: true}: its content
// changed and it stayed -rwsr-xr-x (setgid likewise). Appending clears
// them, as replacing does.
func TestAppendClearsSpecialBits(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	d := Dir{Root: root, Prefix: "home"}
	for name, mode := range map[string]fs.FileMode{
		"suid":   0o755 | fs.ModeSetuid,
		"sgid":   0o750 | fs.ModeSetgid,
		"both":   0o700 | fs.ModeSetuid | fs.ModeSetgid,
		"sticky": 0o644 | fs.ModeSticky,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Write(name, []byte("y"), true); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := mode.Perm(); fi.Mode() != want {
			t.Errorf("%s appended to is %v, want %v", name, fi.Mode(), want)
		}
		if got, _ := os.ReadFile(p); string(got) != "xy" {
			t.Errorf("%s holds %q", name, got)
		}
	}
}
