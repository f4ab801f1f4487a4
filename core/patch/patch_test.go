package patch

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// applyTree applies text to an in-memory tree the way the sandbox does:
// every file checked first, then the tree changed. It returns the new
// tree and the offsets per file.
func applyTree(tree map[string]string, text string) (map[string]string, map[string][]int, error) {
	p, err := Parse(text)
	if err != nil {
		return nil, nil, err
	}
	out := maps.Clone(tree)
	offs := map[string][]int{}
	for _, f := range p.Files {
		cur, ok := out[f.Path]
		switch {
		case f.Action == Add && ok:
			return nil, nil, errors.New("exists: " + f.Path)
		case f.Action != Add && !ok:
			return nil, nil, errors.New("not found: " + f.Path)
		}
		r, err := f.Apply(context.Background(), []byte(cur))
		if err != nil {
			return nil, nil, err
		}
		if r.Moved() {
			offs[f.Path] = r.Offsets
		}
		switch {
		case f.Action == Delete:
			delete(out, f.Path)
		case f.MoveTo != "":
			if _, ok := out[f.MoveTo]; ok {
				return nil, nil, errors.New("exists: " + f.MoveTo)
			}
			delete(out, f.Path)
			out[f.MoveTo] = string(r.Content)
		default:
			out[f.Path] = string(r.Content)
		}
	}
	return out, offs, nil
}

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

var ten = lines(10, func(i int) string { return "line " + string(rune('0'+i%10)) })

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tree  map[string]string
		patch string
		want  map[string]string
		offs  map[string][]int
	}{
		// Unified.
		{
			name:  "unified modify",
			tree:  map[string]string{"a.txt": "one\ntwo\nthree\n"},
			patch: "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
			want:  map[string]string{"a.txt": "one\nTWO\nthree\n"},
		},
		{
			name:  "unified without a/ b/ prefixes, with timestamps",
			tree:  map[string]string{"src/a.txt": "one\ntwo\n"},
			patch: "--- src/a.txt\t2024-01-01 00:00:00\n+++ src/a.txt\t2024-01-02 00:00:00\n@@ -1,2 +1,2 @@\n-one\n+uno\n two\n",
			want:  map[string]string{"src/a.txt": "uno\ntwo\n"},
		},
		{
			name:  "unified create",
			tree:  map[string]string{},
			patch: "--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n",
			want:  map[string]string{"new/file.txt": "hello\nworld\n"},
		},
		{
			name:  "git create empty file",
			tree:  map[string]string{},
			patch: "diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n",
			want:  map[string]string{"empty": ""},
		},
		{
			name:  "unified delete",
			tree:  map[string]string{"old.txt": "a\nb\n", "keep": "k\n"},
			patch: "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
			want:  map[string]string{"keep": "k\n"},
		},
		{
			name:  "git pure rename",
			tree:  map[string]string{"a.txt": "x\n"},
			patch: "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n",
			want:  map[string]string{"b.txt": "x\n"},
		},
		{
			name: "git rename and modify",
			tree: map[string]string{"a.txt": "one\ntwo\n"},
			patch: "diff --git a/a.txt b/dir/b.txt\nsimilarity index 50%\nrename from a.txt\nrename to dir/b.txt\n" +
				"--- a/a.txt\n+++ b/dir/b.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
			want: map[string]string{"dir/b.txt": "one\n2\n"},
		},
		{
			name: "multiple hunks and files, with prose around",
			tree: map[string]string{"a": ten, "b": "b1\nb2\n"},
			patch: "From: someone\nSubject: fix\n\nSome prose.\n---\n a | 2 +-\n\n" +
				"--- a/a\n+++ b/a\n@@ -1,2 +1,3 @@\n line 1\n+inserted\n line 2\n@@ -8,3 +9,2 @@\n line 8\n-line 9\n line 0\n" +
				"--- a/b\n+++ b/b\n@@ -2 +2 @@\n-b2\n+B2\n-- \n2.39.0\n",
			want: map[string]string{"a": strings.Replace(strings.Replace(ten, "line 1\n", "line 1\ninserted\n", 1), "line 9\n", "", 1), "b": "b1\nB2\n"},
		},
		{
			name:  "offset reported",
			tree:  map[string]string{"a": "new top\nextra\n" + ten},
			patch: "--- a/a\n+++ b/a\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+five\n line 6\n@@ -9,2 +9,2 @@\n line 9\n-line 0\n+zero\n",
			want:  map[string]string{"a": "new top\nextra\n" + strings.Replace(strings.Replace(ten, "line 5", "five", 1), "line 0", "zero", 1)},
			offs:  map[string][]int{"a": {2, 2}},
		},
		{
			name:  "negative offset",
			tree:  map[string]string{"a": strings.Replace(ten, "line 1\nline 2\n", "", 1)},
			patch: "--- a/a\n+++ b/a\n@@ -6,2 +6,2 @@\n line 6\n-line 7\n+seven\n",
			want:  map[string]string{"a": strings.Replace(strings.Replace(ten, "line 1\nline 2\n", "", 1), "line 7", "seven", 1)},
			offs:  map[string][]int{"a": {-2}},
		},
		{
			name:  "CRLF file, LF patch",
			tree:  map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"},
			patch: "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n",
			want:  map[string]string{"w.txt": "one\r\nTWO\r\n2.5\r\nthree\r\n"},
		},
		{
			name:  "CRLF file, CRLF patch (git diff of a CRLF file)",
			tree:  map[string]string{"w.txt": "one\r\ntwo\r\n"},
			patch: "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,2 +1,2 @@\r\n one\r\n-two\r\n+deux\r\n",
			want:  map[string]string{"w.txt": "one\r\ndeux\r\n"},
		},
		{
			name:  "new file from a CRLF patch keeps CRLF",
			tree:  map[string]string{},
			patch: "--- /dev/null\r\n+++ b/n.txt\r\n@@ -0,0 +1,2 @@\r\n+a\r\n+b\r\n",
			want:  map[string]string{"n.txt": "a\r\nb\r\n"},
		},
		{
			name:  "no newline at EOF: add one",
			tree:  map[string]string{"a": "x\ny"},
			patch: "--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n",
			want:  map[string]string{"a": "x\ny\n"},
		},
		{
			name:  "no newline at EOF: remove it",
			tree:  map[string]string{"a": "x\ny\n"},
			patch: "--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n",
			want:  map[string]string{"a": "x\ny"},
		},
		{
			name:  "no newline at EOF: append after a last line without one",
			tree:  map[string]string{"a": "x\ny"},
			patch: "--- a/a\n+++ b/a\n@@ -2,1 +2,2 @@\n y\n+z\n",
			want:  map[string]string{"a": "x\ny\nz\n"},
		},
		{
			name:  "hunk counts too high are forgiven",
			tree:  map[string]string{"a": "1\n2\n3\n"},
			patch: "--- a/a\n+++ b/a\n@@ -1,9 +1,9 @@\n 1\n-2\n+two\n",
			want:  map[string]string{"a": "1\ntwo\n3\n"},
		},
		{
			name:  "unnumbered @@ in a unified diff",
			tree:  map[string]string{"a": ten},
			patch: "--- a/a\n+++ b/a\n@@\n line 5\n-line 6\n+six\n",
			want:  map[string]string{"a": strings.Replace(ten, "line 6", "six", 1)},
		},
		{
			name:  "empty context line whose space was dropped",
			tree:  map[string]string{"a": "x\n\ny\n"},
			patch: "--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n\n-y\n+Y\n",
			want:  map[string]string{"a": "x\n\nY\n"},
		},
		{
			name:  "removing a line that starts with two dashes",
			tree:  map[string]string{"q.sql": "select 1;\n-- comment\n"},
			patch: "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n select 1;\n--- comment\n+++ comment\n",
			want:  map[string]string{"q.sql": "select 1;\n++ comment\n"},
		},
		{
			name:  "trailing whitespace difference tolerated",
			tree:  map[string]string{"a": "x  \ny\n"},
			patch: "--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n",
			want:  map[string]string{"a": "x  \nz\n"},
		},

		// Codex.
		{
			name:  "codex add, update, delete",
			tree:  map[string]string{"b.py": "def f():\n    return 1\n\ndef g():\n    return 2\n", "c.txt": "bye\n"},
			patch: "*** Begin Patch\n*** Add File: a/new.txt\n+hello\n+world\n*** Update File: b.py\n@@ def g():\n-    return 2\n+    return 3\n*** Delete File: c.txt\n*** End Patch\n",
			want:  map[string]string{"a/new.txt": "hello\nworld\n", "b.py": "def f():\n    return 1\n\ndef g():\n    return 3\n"},
		},
		{
			name:  "codex move and modify",
			tree:  map[string]string{"old.txt": "a\nb\nc\n"},
			patch: "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new/place.txt\n@@\n a\n-b\n+B\n c\n*** End Patch",
			want:  map[string]string{"new/place.txt": "a\nB\nc\n"},
		},
		{
			name:  "codex pure move",
			tree:  map[string]string{"old.txt": "a\n"},
			patch: "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n*** End Patch\n",
			want:  map[string]string{"new.txt": "a\n"},
		},
		{
			name:  "codex first hunk without @@, several hunks, anchors",
			tree:  map[string]string{"f": "class A:\n  def x(self):\n    pass\nclass B:\n  def x(self):\n    pass\n"},
			patch: "*** Begin Patch\n*** Update File: f\n-class A:\n+class AA:\n@@ class B:\n@@   def x(self):\n-    pass\n+    return 1\n*** End Patch\n",
			want:  map[string]string{"f": "class AA:\n  def x(self):\n    pass\nclass B:\n  def x(self):\n    return 1\n"},
		},
		{
			name:  "codex end of file",
			tree:  map[string]string{"f": "x\ny\nx\ny\n"},
			patch: "*** Begin Patch\n*** Update File: f\n@@\n x\n-y\n+Y\n*** End of File\n*** End Patch\n",
			want:  map[string]string{"f": "x\ny\nx\nY\n"},
		},
		{
			name:  "codex pure addition after an anchor",
			tree:  map[string]string{"f": "[a]\nk=1\n[b]\nk=2\n"},
			patch: "*** Begin Patch\n*** Update File: f\n@@ [a]\n+new=1\n*** End Patch\n",
			want:  map[string]string{"f": "[a]\nnew=1\nk=1\n[b]\nk=2\n"},
		},
		{
			name:  "codex on a CRLF file, empty context line",
			tree:  map[string]string{"f": "a\r\n\r\nb\r\n"},
			patch: "*** Begin Patch\r\n*** Update File: f\r\n@@\r\n a\r\n\r\n-b\r\n+c\r\n*** End Patch\r\n",
			want:  map[string]string{"f": "a\r\n\r\nc\r\n"},
		},
		{
			name:  "codex update of a file without final newline",
			tree:  map[string]string{"f": "a\nb"},
			patch: "*** Begin Patch\n*** Update File: f\n a\n-b\n+c\n*** End Patch\n",
			want:  map[string]string{"f": "a\nc\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, offs, err := applyTree(tc.tree, tc.patch)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("tree:\n got %q\nwant %q", got, tc.want)
			}
			if tc.offs == nil {
				tc.offs = map[string][]int{}
			}
			if !maps.EqualFunc(offs, tc.offs, slices.Equal) {
				t.Errorf("offsets: got %v, want %v", offs, tc.offs)
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tree  map[string]string
		patch string
		want  Conflict
		says  string
	}{
		{
			name:  "context differs",
			tree:  map[string]string{"a": ten},
			patch: "--- a/a\n+++ b/a\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+five\n line X\n",
			want:  Conflict{Hunk: 1, Line: 6, Expected: "line X", Found: "line 6"},
			says:  `Hunk 1 of the file does not match: line 6 should be "line X" but is "line 6".`,
		},
		{
			name:  "second hunk fails",
			tree:  map[string]string{"a": ten},
			patch: "--- a/a\n+++ b/a\n@@ -1,1 +1,1 @@\n-line 1\n+one\n@@ -7,2 +7,2 @@\n line 7\n-line eight\n+8\n",
			want:  Conflict{Hunk: 2, Line: 8, Expected: "line eight", Found: "line 8"},
		},
		{
			name:  "too far away",
			tree:  map[string]string{"a": "a\nb\nc\nd\ne\n" + ten},
			patch: "--- a/a\n+++ b/a\n@@ -1,1 +1,1 @@\n-line 1\n+one\n",
			want:  Conflict{Hunk: 1, Line: 1, Expected: "line 1", Found: "a"},
		},
		{
			name:  "past the end",
			tree:  map[string]string{"a": "x\n"},
			patch: "--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n",
			want:  Conflict{Hunk: 1, Line: 2, Expected: "y", Why: EndOfFile},
		},
		{
			name:  "deletion leaves lines",
			tree:  map[string]string{"a": "x\ny\n"},
			patch: "--- a/a\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n",
			want:  Conflict{Line: 2, Found: "y", Why: LeftOver},
		},
		{
			name:  "codex context not found",
			tree:  map[string]string{"a": ten},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n line 3\n-line 4\n+4\n line five\n*** End Patch\n",
			want:  Conflict{Hunk: 1, Line: 5, Expected: "line five", Found: "line 5"},
		},
		{
			name:  "codex first line nowhere",
			tree:  map[string]string{"a": ten},
			patch: "*** Begin Patch\n*** Update File: a\n-nothing like it\n+x\n*** End Patch\n",
			want:  Conflict{Hunk: 1, Line: 0, Expected: "nothing like it", Why: NotFound},
		},
		{
			name:  "codex anchor missing",
			tree:  map[string]string{"a": ten},
			patch: "*** Begin Patch\n*** Update File: a\n@@ def nope():\n-line 1\n+x\n*** End Patch\n",
			want:  Conflict{Hunk: 1, Line: 0, Expected: "def nope():", Why: NoAnchor},
		},
		{
			name:  "codex hunks must come in order",
			tree:  map[string]string{"a": ten},
			patch: "*** Begin Patch\n*** Update File: a\n-line 5\n+5\n@@\n-line 2\n+2\n*** End Patch\n",
			want:  Conflict{Hunk: 2, Line: 5, Expected: "line 2", Why: NotFound},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := applyTree(tc.tree, tc.patch)
			var c *Conflict
			if !errors.As(err, &c) {
				t.Fatalf("got %v, want a conflict", err)
			}
			if *c != tc.want {
				t.Errorf("got %+v, want %+v", *c, tc.want)
			}
			if tc.says != "" && c.Error() != tc.says {
				t.Errorf("says %q, want %q", c.Error(), tc.says)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		name, patch, says string
	}{
		{"empty", "", "changes no file"},
		{"prose only", "hello\nworld\n", "changes no file"},
		{"hunk before headers", "@@ -1 +1 @@\n-a\n+b\n", "before any --- and +++"},
		{"too many lines for the counts", "--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n+b\n+c\n", "correct the counts"},
		{"binary", "diff --git a/x b/x\nGIT binary patch\nliteral 0\n", "binary patches"},
		{"copy", "diff --git a/x b/y\ncopy from x\ncopy to y\n", "copies are not supported"},
		{"new file with context", "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n a\n+b\n", "only add lines"},
		{"no hunks", "--- a/x\n+++ b/x\n", "has no hunks"},
		{"codex cut off", "*** Begin Patch\n*** Update File: x\n-a\n+b\n", "End Patch"},
		{"codex bad line", "*** Begin Patch\n*** Update File: x\nhello\n*** End Patch\n", "each line starts with"},
		{"codex add without +", "*** Begin Patch\n*** Add File: x\nhello\n*** End Patch\n", "starts with +"},
		{"codex update without hunks", "*** Begin Patch\n*** Update File: x\n*** End Patch\n", "has no hunks"},
		{"codex unknown marker", "*** Begin Patch\n*** Rename File: x\n*** End Patch\n", "expected"},
		{"codex empty path", "*** Begin Patch\n*** Delete File:   \n*** End Patch\n", "needs a path"},
		{"codex empty patch", "*** Begin Patch\n*** End Patch\n", "changes no file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.patch)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a syntax error", err)
			}
			if !strings.Contains(se.Error(), tc.says) {
				t.Errorf("says %q, want it to contain %q", se.Error(), tc.says)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	p, err := Parse("diff --git \"a/with space\" \"b/with space\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/with space\"\n@@ -0,0 +1 @@\n+x\n" +
		"--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != Unified || len(p.Files) != 2 {
		t.Fatalf("got %+v", p)
	}
	if f := p.Files[0]; f.Action != Add || f.Path != "with space" {
		t.Errorf("quoted add: %+v", f)
	}
	if f := p.Files[1]; f.Action != Update || f.Path != "x" || f.MoveTo != "y" {
		t.Errorf("rename by headers: %+v", f)
	}
	// A mode change alone changes nothing Corral applies.
	p, err = Parse("diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n--- a/t\n+++ b/t\n@@ -1 +1 @@\n-a\n+b\n")
	if err != nil || len(p.Files) != 1 || p.Files[0].Path != "t" {
		t.Errorf("mode change: %+v %v", p, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
		"diff --git a/a b/b\nrename from a\nrename to b\n--- a/a\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n",
		"--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n",
		"*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@ def f():\n a\n-b\n+c\n*** End of File\n*** Add File: h\n+x\n*** Delete File: i\n*** End Patch\n",
		"--- a/x\n+++ b/x\n@@\n\n-\n+\n",
		"@@ -0,0 +0,0 @@",
	} {
		f.Add(s, "a\nb\nc\n")
	}
	f.Fuzz(func(t *testing.T, text, content string) {
		p, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Error() == "" {
				t.Fatalf("Parse error %T %v is not a sentence", err, err)
			}
			return
		}
		if len(p.Files) == 0 {
			t.Fatal("a patch without files parsed")
		}
		for _, fp := range p.Files {
			if fp.Path == "" {
				t.Fatalf("empty path in %+v", fp)
			}
			r, err := fp.Apply(context.Background(), []byte(content))
			if err != nil {
				var c *Conflict
				if !errors.As(err, &c) || c.Hunk < 0 || c.Error() == "" {
					t.Fatalf("Apply error %T %v", err, err)
				}
				continue
			}
			if len(r.Offsets) != len(fp.Hunks) {
				t.Fatalf("%d offsets for %d hunks", len(r.Offsets), len(fp.Hunks))
			}
			for _, o := range r.Offsets {
				if o < -MaxOffset || o > MaxOffset {
					t.Fatalf("offset %d beyond %d", o, MaxOffset)
				}
			}
		}
	})
}
