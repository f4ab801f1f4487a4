package applypatch

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox/sandboxtest"
)

// snapshot returns every file, folder and symlink under dir with its
// content, mode or target, so that two snapshots compare byte for byte.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link " + target
		case d.IsDir():
			m[rel+"/"] = fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// layout writes files in alice's folder: "a/b.txt" → content; a value
// starting with "=> " makes a symlink to the rest. The folder is set up
// (with its output folder) first, so that snapshots see only the patch.
func (w *world) layout(t *testing.T, files map[string]string) {
	t.Helper()
	dir, err := w.Box.ScopeDir("alice")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "=> "); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *world) scope() string { return filepath.Join(w.Dir, "base", "alice") }

func (w *world) patch(t *testing.T, text string, dry bool) (PatchResult, error) {
	t.Helper()
	return w.svc.ApplyPatch(context.Background(), alice, PatchArgs{Patch: text, DryRun: dry})
}

func readAll(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			m[n] = "(missing)"
			continue
		}
		m[n] = string(b)
	}
	return m
}

func TestApplyPatchUnified(t *testing.T) {
	w := newWorld(t)
	w.layout(t, map[string]string{
		"src/main.go":   "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"docs/old.md":   "# Old\ntext\n",
		"tmp/junk.txt":  "junk\n",
		"share-me.txt":  "keep\n",
		"win/notes.txt": "one\r\ntwo\r\n",
	})
	os.Chmod(filepath.Join(w.scope(), "docs/old.md"), 0o600)
	p := "diff --git a/src/main.go b/src/main.go\n--- a/src/main.go\n+++ b/src/main.go\n@@ -3,3 +3,3 @@\n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n" +
		"diff --git a/docs/old.md b/docs/new.md\nsimilarity index 60%\nrename from docs/old.md\nrename to docs/new.md\n--- a/docs/old.md\n+++ b/docs/new.md\n@@ -1,2 +1,2 @@\n-# Old\n+# New\n text\n" +
		"diff --git a/tmp/junk.txt b/tmp/junk.txt\ndeleted file mode 100644\n--- a/tmp/junk.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-junk\n" +
		"diff --git a/pkg/util/util.go b/pkg/util/util.go\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/util/util.go\n@@ -0,0 +1,2 @@\n+package util\n+\n" +
		"--- a/win/notes.txt\n+++ b/win/notes.txt\n@@ -1,2 +1,3 @@\n one\n+one and a half\n two\n" +
		"--- /dev/null\n+++ b/share/hello.txt\n@@ -0,0 +1 @@\n+hello, everyone\n"
	res, err := w.patch(t, p, false)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := []PatchFile{
		{Path: "src/main.go", Action: "modified", Hunks: 1},
		{Path: "docs/new.md", From: "docs/old.md", Action: "moved", Hunks: 1},
		{Path: "tmp/junk.txt", Action: "deleted", Hunks: 1},
		{Path: "pkg/util/util.go", Action: "created", Hunks: 1},
		{Path: "win/notes.txt", Action: "modified", Hunks: 1},
		{Path: "share/hello.txt", Action: "created", Hunks: 1},
	}
	if !slices.EqualFunc(res.Files, want, func(a, b PatchFile) bool {
		return a.Path == b.Path && a.From == b.From && a.Action == b.Action && a.Hunks == b.Hunks
	}) || res.DryRun {
		t.Errorf("result:\n got %+v\nwant %+v", res, want)
	}
	got := readAll(t, w.scope(), "src/main.go", "docs/new.md", "docs/old.md", "tmp/junk.txt", "pkg/util/util.go", "win/notes.txt")
	wantFiles := map[string]string{
		"src/main.go":      "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"docs/new.md":      "# New\ntext\n",
		"docs/old.md":      "(missing)",
		"tmp/junk.txt":     "(missing)",
		"pkg/util/util.go": "package util\n\n",
		"win/notes.txt":    "one\r\none and a half\r\ntwo\r\n",
	}
	if !maps.Equal(got, wantFiles) {
		t.Errorf("files:\n got %q\nwant %q", got, wantFiles)
	}
	if fi, err := os.Stat(filepath.Join(w.scope(), "docs/new.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a moved file keeps its mode: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "base", "share", "hello.txt")); string(b) != "hello, everyone\n" {
		t.Errorf("share/hello.txt: %q", b)
	}
	if w.Sink.Len() != 1 {
		t.Fatalf("%d events, want 1: %+v", w.Sink.Len(), w.Sink.Events())
	}
	ev := w.Sink.Last()
	if ev.Op != "file.apply_patch" || ev.Decision != audit.Allow || ev.DecidedBy != audit.ByScope ||
		ev.Target != "src/main.go, docs/old.md, docs/new.md, tmp/junk.txt, pkg/util/util.go, win/notes.txt, share/hello.txt" ||
		!strings.Contains(ev.Detail, "moved docs/old.md to docs/new.md (1 hunks)") || !strings.Contains(ev.Detail, "deleted tmp/junk.txt") {
		t.Errorf("event: %+v", ev)
	}
	leftovers(t, w.Dir)
}

// leftovers fails if a temporary file of Corral's stayed behind.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	for name := range snapshot(t, dir) {
		if strings.Contains(name, ".corral-tmp-") {
			t.Errorf("temporary file left: %s", name)
		}
	}
}

func TestApplyPatchCodex(t *testing.T) {
	w := newWorld(t)
	w.layout(t, map[string]string{
		"app.py":     "import os\n\ndef main():\n    print('hi')\n\nif __name__ == '__main__':\n    main()\n",
		"lib/old.py": "X = 1\n",
		"gone.txt":   "bye\n",
	})
	p := "*** Begin Patch\n" +
		"*** Update File: app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n" +
		"*** Update File: lib/old.py\n*** Move to: lib/new.py\n@@\n-X = 1\n+X = 2\n" +
		"*** Delete File: gone.txt\n" +
		"*** Add File: output/report.md\n+# Report\n+done\n" +
		"*** End Patch\n"
	res, err := w.patch(t, p, false)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if len(res.Files) != 4 || res.Files[1].Action != "moved" || res.Files[1].Path != "lib/new.py" || res.Files[3].Action != "created" {
		t.Errorf("result: %+v", res)
	}
	got := readAll(t, w.scope(), "app.py", "lib/old.py", "lib/new.py", "gone.txt", "output/report.md")
	want := map[string]string{
		"app.py":           "import os\n\ndef main():\n    print('hello')\n\nif __name__ == '__main__':\n    main()\n",
		"lib/old.py":       "(missing)",
		"lib/new.py":       "X = 2\n",
		"gone.txt":         "(missing)",
		"output/report.md": "# Report\ndone\n",
	}
	if !maps.Equal(got, want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
}

func TestApplyPatchDryRunAndOffsets(t *testing.T) {
	w := newWorld(t)
	w.layout(t, map[string]string{"a.txt": "added\nabove\n1\n2\n3\n4\n"})
	before := snapshot(t, w.Dir)
	p := "--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n 2\n-3\n+three\n"
	res, err := w.patch(t, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if !res.DryRun || len(res.Files) != 1 || !slices.Equal(res.Files[0].Offsets, []int{2}) {
		t.Errorf("dry run: %+v", res)
	}
	if after := snapshot(t, w.Dir); !maps.Equal(before, after) {
		t.Errorf("a dry run wrote:\nbefore %q\nafter  %q", before, after)
	}
	if ev := w.Sink.Last(); !strings.Contains(ev.Detail, "dry run") || !strings.Contains(ev.Detail, "offsets [2]") {
		t.Errorf("event: %+v", ev)
	}
	if _, err := w.patch(t, p, false); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, w.scope(), "a.txt")["a.txt"]; got != "added\nabove\n1\n2\nthree\n4\n" {
		t.Errorf("applied: %q", got)
	}
}

// A patch whose last hunk does not match changes nothing, whatever the
// files before it would have done.
func TestApplyPatchAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		kind        errs.Kind
		says        string
	}{
		{"bad last hunk, unified", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- /dev/null\n+++ b/new/dir/n.txt\n@@ -0,0 +1 @@\n+n\n" +
			"--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,3 @@\n c1\n-c2\n+C2\n c3\n",
			errs.Conflict, `Hunk 1 of c.txt does not match: line 3 should be "c3" but is "c4". Nothing was changed.`},
		{"bad last hunk, codex", "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Delete File: b.txt\n*** Update File: c.txt\n c1\n-c9\n+C\n*** End Patch\n",
			errs.Conflict, "c9"},
		{"creating over an existing file", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n", errs.Exists, "b.txt"},
		{"moving onto an existing file", "*** Begin Patch\n*** Delete File: a.txt\n*** Update File: b.txt\n*** Move to: c.txt\n*** End Patch\n", errs.Exists, "c.txt"},
		{"a missing file", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+A\n", errs.NotFound, "nope.txt"},
		{"the same file twice", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-A\n+B\n", errs.InvalidParams, "more than once"},
		{"a binary file", "--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-x\n+y\n", errs.Binary, "binary"},
		{"a folder", "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n", errs.IsDirectory, "dir"},
		{"syntax", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n+B\n", errs.InvalidParams, "Line 6 of the patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.layout(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c1\nc2\nc4\n", "bin.dat": "x\x00\n", "dir/f": "f"})
			before := snapshot(t, w.Dir)
			res, err := w.patch(t, tc.patch, false)
			if errs.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v (%s), want %s saying %q", err, errs.KindOf(err), tc.kind, tc.says)
			}
			if strings.Contains(err.Error(), w.Dir) {
				t.Errorf("host path in %q", err)
			}
			if len(res.Files) != 0 {
				t.Errorf("files reported for a failed patch: %+v", res.Files)
			}
			if after := snapshot(t, w.Dir); !maps.Equal(before, after) {
				t.Errorf("the tree changed:\nbefore %q\nafter  %q", before, after)
			}
			if w.Sink.Len() != 1 || w.Sink.Last().Decision != audit.Error {
				t.Errorf("events: %+v", w.Sink.Events())
			}
		})
	}
}

// freeze makes removing anything from dir fail for real: the immutable
// attribute for root (who ignores permission bits), mode 0555 otherwise.
func freeze(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			t.Fatalf("chattr +i: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
		return
	}
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
}

// When a write fails after others were made, the files already changed
// get their old content back and new files and folders go away.
func TestApplyPatchRollsBack(t *testing.T) {
	w := newWorld(t)
	w.layout(t, map[string]string{"a.txt": "a\n", "moved.txt": "m\n", "locked/f.txt": "f\n"})
	os.Chmod(filepath.Join(w.scope(), "moved.txt"), 0o640)
	freeze(t, filepath.Join(w.scope(), "locked"))
	before := snapshot(t, w.Dir)
	p := "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: fresh/dir/n.txt\n+n\n" +
		"*** Update File: moved.txt\n*** Move to: elsewhere/moved.txt\n*** Delete File: locked/f.txt\n*** End Patch\n"
	_, err := w.patch(t, p, false)
	if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), "locked/f.txt") {
		t.Fatalf("got %v (%s), want denied about locked/f.txt", err, errs.KindOf(err))
	}
	if after := snapshot(t, w.Dir); !maps.Equal(before, after) {
		t.Errorf("not rolled back:\nbefore %q\nafter  %q", before, after)
	}
}

// Paths in a patch resolve like every other path: nothing escapes, and
// a refused path anywhere in the patch means nothing is written.
func TestApplyPatchEscapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(w *world) string
		kind errs.Kind
		// exists: the path itself is a symlink, so creating or moving
		// onto it answers exists before anything follows it.
		exists bool
	}{
		{"dot-dot", func(*world) string { return "../bob/x.txt" }, errs.Denied, false},
		{"dot-dot deep", func(*world) string { return "a/../../../outside/f.txt" }, errs.Denied, false},
		{"absolute outside, nobody to ask", func(w *world) string { return filepath.Join(w.Outside, "f.txt") }, errs.Denied, false},
		{"Corral's own folder", func(w *world) string { return filepath.Join(w.Private, "f.txt") }, errs.Denied, false},
		{"read-only root", func(w *world) string { return filepath.Join(w.RoRoot, "f.txt") }, errs.Denied, false},
		{"symlinked file leading out", func(*world) string { return "out-file" }, errs.Denied, true},
		{"through a symlinked folder leading out", func(*world) string { return "out-dir/f.txt" }, errs.Denied, false},
		{"absolute symlink", func(*world) string { return "abs-link/f.txt" }, errs.Denied, false},
		{"malformed", func(*world) string { return "a\\b" }, errs.InvalidPath, false},
	} {
		for _, form := range []string{"update", "create", "delete", "move-to"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				w := newWorld(t)
				w.layout(t, map[string]string{
					"a.txt":    "a\n",
					"out-file": "=> ../../outside/f.txt",
					"out-dir":  "=> ../../outside",
					"abs-link": "=> " + w.Outside,
				})
				p := tc.path(w)
				body := map[string]string{
					"update":  "*** Update File: " + p + "\n@@\n-content of outside\n+pwned\n",
					"create":  "*** Add File: " + p + "\n+pwned\n",
					"delete":  "*** Delete File: " + p + "\n",
					"move-to": "*** Update File: a.txt\n*** Move to: " + p + "\n",
				}[form]
				text := "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: first.txt\n+1\n" + body + "*** End Patch\n"
				if form == "move-to" {
					text = "*** Begin Patch\n*** Add File: first.txt\n+1\n" + body + "*** End Patch\n"
				}
				before := snapshot(t, w.Dir)
				_, err := w.patch(t, text, false)
				want := tc.kind
				if tc.exists && (form == "create" || form == "move-to") {
					want = errs.Exists
				}
				if errs.KindOf(err) != want {
					t.Fatalf("got %v (%s), want %s", err, errs.KindOf(err), want)
				}
				if after := snapshot(t, w.Dir); !maps.Equal(before, after) {
					t.Errorf("the tree changed:\nbefore %q\nafter  %q", before, after)
				}
				if strings.Contains(err.Error(), w.Dir) && !strings.HasPrefix(p, "/") {
					t.Errorf("host path in %q", err)
				}
			})
		}
	}
}

// Outside paths go through the owner, as file.write's do.
func TestApplyPatchAsksForOutside(t *testing.T) {
	w := newWorld(t)
	ans := &sandboxtest.Answerer{P: w.Pol, D: policy.AllowOnce}
	defer w.Pol.Subscribe(ans)()
	target := filepath.Join(w.Outside, "f.txt")
	p := "--- " + target + "\n+++ " + target + "\n@@ -1 +1 @@\n-content of outside\n+patched\n"
	res, err := w.patch(t, p, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "patched\n" {
		t.Errorf("outside file: %q", b)
	}
	if len(ans.Asked()) != 1 || ans.Asked()[0].Access != policy.Write || res.Files[0].Path != target {
		t.Errorf("asked %+v, result %+v", ans.Asked(), res)
	}
	if ev := w.Sink.Last(); ev.DecidedBy != audit.ByOwner || ev.Decision != audit.Allow {
		t.Errorf("event: %+v", ev)
	}
}

func TestApplyPatchTooLarge(t *testing.T) {
	w := newWorld(t)
	_, err := w.patch(t, strings.Repeat("x", MaxPatchBytes+1), false)
	if errs.KindOf(err) != errs.TooLarge {
		t.Fatalf("got %v", err)
	}
}

// TestApplyPatchRefusesTempNames (red team): file.write and file.move
// refuse to create a name starting with ".corral-tmp-", but a patch's
// Add File and Move to created one (.corral-tmp-0123456789abcdef, exactly
// Corral's own form), which the start-up sweep then deletes with no
// event, though the patch's event says it was created.
func TestApplyPatchRefusesTempNames(t *testing.T) {
	w := newWorld(t)
	w.layout(t, map[string]string{"q.txt": "q\n"})
	for _, p := range []string{
		"*** Begin Patch\n*** Add File: .corral-tmp-0123456789abcdef\n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: sub/.corral-tmp-cmd-1-2/f\n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: q.txt\n*** Move to: .corral-tmp-0123456789abcdef\n@@\n-q\n+r\n*** End Patch\n",
	} {
		_, err := w.patch(t, p, false)
		if e := errs.As(err); err == nil || e.Kind != errs.InvalidPath {
			t.Errorf("patch %q: %v; want invalid_path", p, err)
		}
	}
	got := readAll(t, w.scope(), "q.txt", ".corral-tmp-0123456789abcdef", "sub/.corral-tmp-cmd-1-2/f")
	want := map[string]string{"q.txt": "q\n", ".corral-tmp-0123456789abcdef": "(missing)", "sub/.corral-tmp-cmd-1-2/f": "(missing)"}
	if !maps.Equal(got, want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
}
