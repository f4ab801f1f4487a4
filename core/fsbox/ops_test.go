//go:build unix

package fsbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

func noTemps(t *testing.T, dir string) {
	t.Helper()
	for _, n := range names(t, dir) {
		if isTemp(n) {
			t.Errorf("temp file %s left in %s", n, dir)
		}
	}
}

func TestWrite(t *testing.T) {
	root, _ := makefs(t, "d/", "old = old", "f = text", "link => f", "chain => link", "sub/target = t", "d/up => ../sub/target",
		"dangling => newfile", "dirlink => sub", "hard == $OUT/secret")
	os.Chmod(filepath.Join(root, "old"), 0o600)
	d := openDir(t, root, "share")

	n, err := d.Write("a/b/c.txt", []byte("hello"), false)
	if err != nil || n != 5 || readHost(t, root, "a/b/c.txt") != "hello" {
		t.Errorf("Write with parents: %d, %v", n, err)
	}
	if _, err := d.Write("old", []byte("new"), false); err != nil || readHost(t, root, "old") != "new" {
		t.Errorf("Write replace: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "old")); fi.Mode().Perm() != 0o600 {
		t.Errorf("replace changed mode to %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(root, "a/b/c.txt")); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v", fi.Mode())
	}
	// Through links: the target changes, the link stays.
	for _, c := range []struct{ link, target string }{
		{"link", "f"}, {"chain", "f"}, {"d/up", "sub/target"}, {"dangling", "newfile"}, {"dirlink/x", "sub/x"},
	} {
		if _, err := d.Write(c.link, []byte("via "+c.link), false); err != nil {
			t.Errorf("Write %s: %v", c.link, err)
			continue
		}
		if got := readHost(t, root, c.target); got != "via "+c.link {
			t.Errorf("Write %s: %s holds %q", c.link, c.target, got)
		}
	}
	for _, l := range []string{"link", "chain", "d/up", "dangling", "dirlink"} {
		if fi, err := os.Lstat(filepath.Join(root, l)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link", l)
		}
	}
	// Append.
	if n, err := d.Write("f", []byte("+more"), true); err != nil || n != 5 || readHost(t, root, "f") != "via chain+more" {
		t.Errorf("append: %d %v %q", n, err, readHost(t, root, "f"))
	}
	if _, err := d.Write("new/appended", []byte("x"), true); err != nil || readHost(t, root, "new/appended") != "x" {
		t.Errorf("append creating: %v", err)
	}
	if _, err := d.Write("link", []byte("!"), true); err != nil || readHost(t, root, "f") != "via chain+more!" {
		t.Errorf("append through link: %v", err)
	}
	// Replacing a hard-linked name is fine (the other name keeps its
	// content); appending to it is not.
	_, err = d.Write("hard", []byte("x"), true)
	errkind.Want(t, err, errs.Denied, "append to hard link")

	for _, c := range []struct {
		rel  string
		kind errs.Kind
	}{
		{".", errs.IsDirectory},
		{"d", errs.IsDirectory},
		{"d/", errs.IsDirectory},
		{"dirlink", errs.IsDirectory},
		{"f/", errs.NotDirectory},
		{"f/x", errs.NotDirectory},
		{"f/x/y", errs.NotDirectory},
		{"nothere/", errs.InvalidPath},
	} {
		for _, app := range []bool{false, true} {
			_, err := d.Write(c.rel, []byte("x"), app)
			errkind.Want(t, err, c.kind, "Write "+c.rel)
			checkErr(t, "Write "+c.rel, err, root)
			if e := errs.As(err); e != nil && c.rel != "." && !strings.Contains(e.Msg, "share/"+strings.TrimSuffix(c.rel, "/")) {
				t.Errorf("Write %s: %q does not name share/%s", c.rel, e.Msg, c.rel)
			}
		}
	}
	for _, dir := range []string{root, filepath.Join(root, "a/b"), filepath.Join(root, "sub")} {
		noTemps(t, dir)
	}
}

func TestWriteReplacesAtomically(t *testing.T) {
	root, _ := makefs(t, "f = old")
	d := openDir(t, root, "")
	// Someone holding the old file keeps reading the old content: the new
	// one arrives by rename, not by truncating in place.
	held, err := os.Open(filepath.Join(root, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := d.Write("f", []byte("new content"), false); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	n, _ := held.Read(buf)
	if string(buf[:n]) != "old" {
		t.Errorf("old handle reads %q", buf[:n])
	}
	if readHost(t, root, "f") != "new content" {
		t.Errorf("new content missing")
	}
	// A temp file someone left is shown, not hidden, and not disturbed.
	os.WriteFile(filepath.Join(root, tempPrefix+"left"), nil, 0o644)
	l, _, err := d.List(".", 1, 0)
	if err != nil || len(l) != 2 || l[0].Name != tempPrefix+"left" || l[1].Name != "f" {
		t.Errorf("List shows %+v, %v", l, err)
	}
	if m, _, err := d.Find(".", tempPrefix+"*", 0); err != nil || len(m) != 1 {
		t.Errorf("Find of the leftover: %v %v", m, err)
	}
}

// A name like Corral's temporary files cannot be made: it would pass for
// a leftover of an interrupted write.
func TestTempNamesRefused(t *testing.T) {
	root, _ := makefs(t, "f = text", "d/")
	d := openDir(t, root, "")
	for _, name := range []string{tempPrefix + "x", "d/" + tempPrefix + "0123", tempPrefix + "dir/inner.txt"} {
		_, err := d.Write(name, []byte("x"), false)
		errkind.Want(t, err, errs.InvalidPath, "Write "+name)
		if e := errs.As(err); e == nil || !strings.Contains(e.Msg, "temporary files") {
			t.Errorf("Write %s: %v", name, err)
		}
		_, err = d.Write(name, []byte("x"), true)
		errkind.Want(t, err, errs.InvalidPath, "Write append "+name)
		errkind.Want(t, Move(d, "f", d, name), errs.InvalidPath, "Move to "+name)
	}
	if got := names(t, root); !slices.Equal(got, []string{"d", "f"}) {
		t.Errorf("after refused writes: %v", got)
	}
	// A name that only contains the prefix later on is fine.
	if _, err := d.Write("notes"+tempPrefix+"x", []byte("x"), false); err != nil {
		t.Error(err)
	}
}

func TestEdit(t *testing.T) {
	root, _ := makefs(t, "notes/a.txt = one two two three", "link => notes/a.txt", "bin = a\x00b", "d/", "hard == $OUT/secret")
	d := openDir(t, root, "")

	n, err := d.Edit("notes/a.txt", "one", "1", false)
	if err != nil || n != 1 || readHost(t, root, "notes/a.txt") != "1 two two three" {
		t.Errorf("Edit once: %d %v", n, err)
	}
	_, err = d.Edit("notes/a.txt", "two", "2", false)
	errkind.Want(t, err, errs.Conflict, "Edit ambiguous")
	if e := errs.As(err); e == nil || !strings.Contains(e.Msg, "2 times") || !strings.Contains(e.Msg, "notes/a.txt") {
		t.Errorf("ambiguous message: %v", err)
	}
	_, err = d.Edit("notes/a.txt", "four", "4", false)
	errkind.Want(t, err, errs.Conflict, "Edit missing text")
	if e := errs.As(err); e == nil || e.Msg != "The text to replace was not found in notes/a.txt." || e.Path != "notes/a.txt" {
		t.Errorf("not found message: %+v", e)
	}
	_, err = d.Edit("notes/a.txt", "four", "4", true)
	errkind.Want(t, err, errs.Conflict, "Edit all, missing text")
	n, err = d.Edit("link", "two", "2", true)
	if err != nil || n != 2 || readHost(t, root, "notes/a.txt") != "1 2 2 three" {
		t.Errorf("Edit all through link: %d %v", n, err)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "link")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Edit replaced the link")
	}
	_, err = d.Edit("notes/a.txt", "", "x", false)
	errkind.Want(t, err, errs.InvalidParams, "Edit empty")
	_, err = d.Edit("bin", "a", "b", false)
	errkind.Want(t, err, errs.Binary, "Edit binary")
	_, err = d.Edit("d", "a", "b", false)
	errkind.Want(t, err, errs.IsDirectory, "Edit folder")
	_, err = d.Edit("notes/a.txt/", "1", "b", false)
	errkind.Want(t, err, errs.NotDirectory, "Edit file/")
	_, err = d.Edit("missing", "a", "b", false)
	errkind.Want(t, err, errs.NotFound, "Edit missing")
	_, err = d.Edit("hard", "O", "o", false)
	errkind.Want(t, err, errs.Denied, "Edit hard link")
	noTemps(t, filepath.Join(root, "notes"))
}

func TestDelete(t *testing.T) {
	root, outside := makefs(t, "f", "empty/", "full/a", "full/sub/b", "link => full", "out => $OUT/odir", "dirlink => full")
	d := openDir(t, root, "")
	for _, c := range []struct {
		rel       string
		recursive bool
		kind      errs.Kind
	}{
		{".", true, errs.Denied},
		{"missing", false, errs.NotFound},
		{"full", false, errs.Conflict},
		{"f/", false, errs.NotDirectory},
		{"full/a/", false, errs.NotDirectory},
	} {
		err := d.Delete(c.rel, c.recursive)
		errkind.Want(t, err, c.kind, "Delete "+c.rel)
		checkErr(t, "Delete "+c.rel, err, root)
	}
	if !exists(root, "full/sub/b") || !exists(root, "f") {
		t.Fatal("a failed delete removed something")
	}
	for _, c := range []struct {
		rel       string
		recursive bool
	}{{"f", false}, {"empty", false}, {"link", true}, {"out", true}, {"dirlink/", false}} {
		if err := d.Delete(c.rel, c.recursive); err != nil {
			t.Errorf("Delete %s: %v", c.rel, err)
		}
		if exists(root, strings.TrimSuffix(c.rel, "/")) {
			t.Errorf("Delete %s left it", c.rel)
		}
	}
	// Links are removed, never what they point at.
	if !exists(root, "full/sub/b") || !exists(outside, "odir/secret") {
		t.Fatal("deleting a link removed its target")
	}
	if err := d.Delete("full", true); err != nil || exists(root, "full") {
		t.Errorf("recursive Delete: %v", err)
	}
}

func TestMove(t *testing.T) {
	root, _ := makefs(t, "a.txt = A", "b.txt = B", "d/x", "d/sub/y", "link => a.txt", "hard == $OUT/secret")
	otherRoot, _ := makefs(t, "taken = T")
	d := openDir(t, root, "")
	other := openDir(t, otherRoot, "share")

	if err := Move(d, "a.txt", d, "new/deep/a.txt"); err != nil || readHost(t, root, "new/deep/a.txt") != "A" || exists(root, "a.txt") {
		t.Errorf("Move with parents: %v", err)
	}
	if err := Move(d, "d", d, "e"); err != nil || !exists(root, "e/sub/y") {
		t.Errorf("Move folder: %v", err)
	}
	if err := Move(d, "link", d, "link2"); err != nil {
		t.Errorf("Move link: %v", err)
	} else if fi, _ := os.Lstat(filepath.Join(root, "link2")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Move followed the link")
	}
	for _, c := range []struct {
		from, to string
		kind     errs.Kind
	}{
		{"b.txt", "e/x", errs.Exists},
		{"b.txt", "b.txt", errs.Exists},
		{"b.txt", "e", errs.Exists},
		{"e", "e/sub/z", errs.Conflict},
		{"e", "e/z", errs.Conflict},
		{".", "x", errs.Denied},
		{"b.txt", ".", errs.Exists},
		{"missing", "x", errs.NotFound},
		{"b.txt/", "x", errs.NotDirectory},
		{"b.txt", "x/", errs.NotDirectory},
		{"b.txt", "e/x/y", errs.NotDirectory},
	} {
		err := Move(d, c.from, d, c.to)
		errkind.Want(t, err, c.kind, "Move "+c.from+" → "+c.to)
		checkErr(t, "Move", err, root)
	}
	if readHost(t, root, "b.txt") != "B" || readHost(t, root, "e/x") != "d/x" {
		t.Fatal("a failed Move changed something")
	}

	// Across roots: files are copied and removed, the rest refused.
	if err := Move(d, "b.txt", other, "in/b.txt"); err != nil || readHost(t, otherRoot, "in/b.txt") != "B" || exists(root, "b.txt") {
		t.Errorf("Move across: %v", err)
	}
	noTemps(t, filepath.Join(otherRoot, "in"))
	for _, c := range []struct {
		from, to string
		kind     errs.Kind
	}{
		{"e", "e", errs.Conflict},
		{"link2", "l", errs.Conflict},
		{"hard", "h", errs.Denied},
		{"new/deep/a.txt", "taken", errs.Exists},
		{"missing", "m", errs.NotFound},
	} {
		err := Move(d, c.from, other, c.to)
		errkind.Want(t, err, c.kind, "Move across "+c.from)
		checkErr(t, "Move across", err, root)
	}
	err := Move(d, "new/deep/a.txt", other, "taken")
	if e := errs.As(err); e == nil || e.Path != "share/taken" {
		t.Errorf("exists error names %+v, want share/taken", e)
	}

	// Two roots opened at the same folder rename, folders included.
	same := openDir(t, root, "")
	if err := Move(d, "e", same, "f"); err != nil || !exists(root, "f/sub/y") {
		t.Errorf("Move between two roots of one folder: %v", err)
	}
}

func TestStat(t *testing.T) {
	root, _ := makefs(t, "f = hello", "d/", "link => f", "out => $OUT/secret")
	d := openDir(t, root, "share")
	for _, c := range []struct {
		rel, typ, path string
		size           int64
	}{
		{"f", "file", "share/f", 5},
		{"d", "dir", "share/d", 0},
		{"d/", "dir", "share/d", 0},
		{"link", "symlink", "share/link", 1},
		{"out", "symlink", "share/out", -1},
		{".", "dir", "share", 0},
	} {
		in, err := d.Stat(c.rel)
		if err != nil {
			t.Errorf("Stat %s: %v", c.rel, err)
			continue
		}
		if in.Type != c.typ || in.Path != c.path || (c.size >= 0 && in.Size != c.size) || in.Modified.IsZero() || in.Modified.Location().String() != "UTC" {
			t.Errorf("Stat %s = %+v", c.rel, in)
		}
	}
	_, err := d.Stat("f/")
	errkind.Want(t, err, errs.NotDirectory, "Stat f/")
	_, err = d.Stat("missing")
	errkind.Want(t, err, errs.NotFound, "Stat missing")
	in, _ := d.Stat("f")
	if in.Name != "f" {
		t.Errorf("name %q", in.Name)
	}
	if !slices.Contains([]string{"file", "dir", "symlink"}, in.Type) {
		t.Errorf("type %q", in.Type)
	}
}

func TestCreateDir(t *testing.T) {
	root, _ := makefs(t, "d/", "f = text", "dirlink => d")
	d := openDir(t, root, "share")

	made, err := d.CreateDir("a/b/c")
	if err != nil || !slices.Equal(made, []string{"a", "a/b", "a/b/c"}) {
		t.Errorf("CreateDir with parents: %q, %v", made, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a/b/c")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
		t.Errorf("a/b/c is not a 0755 folder: %v, %v", fi, err)
	}
	if made, err := d.CreateDir("a/b/c"); err != nil || len(made) != 0 {
		t.Errorf("CreateDir of an existing folder: %q, %v", made, err)
	}
	if made, err := d.CreateDir("d/e"); err != nil || !slices.Equal(made, []string{"d/e"}) {
		t.Errorf("CreateDir below an existing folder: %q, %v", made, err)
	}
	if made, err := d.CreateDir("dirlink/x"); err != nil || !slices.Equal(made, []string{"dirlink/x"}) {
		t.Errorf("CreateDir through a link inside: %q, %v", made, err)
	} else if fi, err := os.Stat(filepath.Join(root, "d/x")); err != nil || !fi.IsDir() {
		t.Errorf("d/x was not made through dirlink: %v", err)
	}
	_, err = d.CreateDir("f")
	errkind.Want(t, err, errs.Exists, "CreateDir(f)")
	_, err = d.CreateDir("f/g")
	errkind.Want(t, err, errs.NotDirectory, "CreateDir(f/g)")
	if err != nil && !strings.Contains(err.Error(), "share/f") {
		t.Errorf("the error does not name share/f: %v", err)
	}
}
