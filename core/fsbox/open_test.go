package fsbox

import (
	"io"
	"testing"

	"corral/core/errs"
)

// TestOpenNoFollow: what a shared link may open. Every symlink on the way
// is refused, even one that stays inside the root, and the usual rules of
// Open (no special files, no hard links) still hold.
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
		rel, want string
		kind      errs.Kind
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
		{rel: "out/deep", kind: errs.IsDirectory},
		{rel: ".", kind: errs.IsDirectory},
		{rel: "out/missing.txt", kind: errs.NotFound},
		{rel: "missing/a.txt", kind: errs.NotFound},
		{rel: "top.txt/x", kind: errs.NotDirectory},
		{rel: "out/report.md/", kind: errs.NotDirectory},
		{rel: "../x", kind: errs.InvalidPath},
	} {
		f, info, err := d.OpenNoFollow(c.rel)
		if c.kind != "" {
			if errs.KindOf(err) != c.kind {
				t.Errorf("%s: err %v (kind %q), want kind %q", c.rel, err, errs.KindOf(err), c.kind)
			}
			if f != nil {
				t.Errorf("%s: a file came back with the error", c.rel)
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.rel, err)
			continue
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if string(got) != c.want || info.Path != c.rel || info.Size != int64(len(c.want)) || info.Type != "file" {
			t.Errorf("%s: read %q, info %+v", c.rel, got, info)
		}
	}
}
