//go:build linux

package fsbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"corral/core/errs"
)

// TestOpenNoFollow: what a shared link may open. Every symlink on the way
// is refused, even one that stays inside the root, the usual rules of Read
// (no special files, no hard links) still hold, and a folder comes back
// as a Dir that lists with full paths.
func TestOpenNoFollow(t *testing.T) {
	root, _ := makefs(t,
		"top.txt = top",
		"out/report.md = # Report",
		"out/deep/a.txt = deep",
		"private/secret.txt = private",
		"out/in-root => ../private/secret.txt",
		"out/escape => $OUT/secret",
		"via => out",
		"out/dirlink => deep",
		"orig.txt = orig",
		"out/twice == $ROOT/orig.txt",
		"out/pipe |",
	)
	d := openDir(t, root, "")
	for _, c := range []struct {
		rel, want, list string // list: a folder's entries, "path:type" in order
		kind            errs.Kind
	}{
		{rel: "top.txt", want: "top"},
		{rel: "out/report.md", want: "# Report"},
		{rel: "out/deep/a.txt", want: "deep"},
		{rel: "out/in-root", kind: errs.Denied},
		{rel: "out/escape", kind: errs.Denied},
		{rel: "via/report.md", kind: errs.Denied},
		{rel: "out/dirlink/a.txt", kind: errs.Denied},
		{rel: "out/dirlink", kind: errs.Denied},
		{rel: "out/twice", kind: errs.Denied},
		{rel: "orig.txt", kind: errs.Denied},
		{rel: "out/pipe", kind: errs.Denied},
		{rel: "out/deep", list: "out/deep/a.txt:file"},
		{rel: ".", list: "orig.txt:file out:dir private:dir top.txt:file via:symlink"},
		{rel: "out/missing.txt", kind: errs.NotFound},
		{rel: "missing/a.txt", kind: errs.NotFound},
		{rel: "top.txt/x", kind: errs.NotDirectory},
		{rel: "out/report.md/", kind: errs.NotDirectory},
		{rel: "../x", kind: errs.InvalidPath},
	} {
		o, err := d.OpenNoFollow(c.rel)
		if c.kind != "" {
			if errs.KindOf(err) != c.kind {
				t.Errorf("%s: err %v (kind %q), want kind %q", c.rel, err, errs.KindOf(err), c.kind)
			}
			if o.File != nil || o.Dir != nil {
				t.Errorf("%s: something came back with the error", c.rel)
				o.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.rel, err)
			continue
		}
		if c.list != "" {
			entries, _, err := o.Dir.List(".", 1, 100)
			o.Close()
			var names []string
			for _, e := range entries {
				names = append(names, e.Path+":"+e.Type)
			}
			if err != nil || strings.Join(names, " ") != c.list || o.Info.Type != "dir" || o.Info.Path != c.rel {
				t.Errorf("%s: listed %q (%v), info %+v", c.rel, names, err, o.Info)
			}
			continue
		}
		got, _ := io.ReadAll(o.File)
		o.Close()
		if string(got) != c.want || o.Info.Path != c.rel || o.Info.Size != int64(len(c.want)) || o.Info.Type != "file" {
			t.Errorf("%s: read %q, info %+v", c.rel, got, o.Info)
		}
	}
	if _, err := d.Root.Stat("."); err != nil {
		t.Errorf("OpenNoFollow closed the Dir's own root: %v", err)
	}
}

// TestOpenNoFollowSwapRace swaps a folder on the way with a symlink to
// another folder of the same root (atomically, RENAME_EXCHANGE) while a
// link's path is opened and listed again and again: what comes back is
// always the real folder's file or listing, or a refusal.
func TestOpenNoFollowSwapRace(t *testing.T) {
	root, _ := makefs(t, "out/d/x.txt = public", "private/x.txt = PRIVATE", "private/secret.txt = PRIVATE")
	d := openDir(t, root, "")
	real, tmp := filepath.Join(root, "out", "d"), filepath.Join(root, "out", "d.lnk")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Symlink("../private", tmp)
			unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, tmp, unix.RENAME_EXCHANGE) // a symlink now
			unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, tmp, unix.RENAME_EXCHANGE) // back
			os.Remove(tmp)
		}
	}()
	defer func() { close(stop); <-done }()
	var opened, listed int
	for i := 0; i < 3000; i++ {
		if o, err := d.OpenNoFollow("out/d/x.txt"); err == nil {
			b, _ := io.ReadAll(o.File)
			o.Close()
			if string(b) != "public" {
				t.Fatalf("a link to out/d/x.txt served %q", b)
			}
			opened++
		}
		if o, err := d.OpenNoFollow("out/d"); err == nil {
			entries, _, _ := o.Dir.List(".", 1, 10)
			o.Close()
			for _, e := range entries {
				if e.Path != "out/d/x.txt" {
					t.Fatalf("a link to out/d listed %s", e.Path)
				}
			}
			listed++
		}
	}
	if opened == 0 || listed == 0 {
		t.Fatalf("nothing opened (%d files, %d folders): the race never let the real folder through", opened, listed)
	}
	t.Logf("%d files and %d folders opened, the rest refused", opened, listed)
}
