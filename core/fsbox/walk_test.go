//go:build unix

package fsbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

var walkTree = []string{
	"docs/a.txt = alpha\nbeta\n",
	"docs/b.md = gamma\n",
	"docs/deep/c.txt = alpha again\n",
	"docs/deep/er/d.txt = delta\n",
	"docs-x = not a folder\n",
	"top.txt = alpha top\r\n",
	"bin.dat = al\x00pha",
	"link => docs",
	"filelink => top.txt",
	"out => $OUT/odir",
	"pipe |",
	"hard == $OUT/secret",
	"empty/",
}

func infoPaths(in []Info) []string {
	var out []string
	for _, e := range in {
		out = append(out, e.Path+":"+e.Type)
	}
	return out
}

func TestList(t *testing.T) {
	root, _ := makefs(t, walkTree...)
	d := openDir(t, root, "share")

	l, tr, err := d.List(".", 1, 0)
	if err != nil || tr {
		t.Fatal(err, tr)
	}
	want := []string{"share/bin.dat:file", "share/docs:dir", "share/docs-x:file", "share/empty:dir", "share/filelink:symlink",
		"share/hard:file", "share/link:symlink", "share/out:symlink", "share/top.txt:file"}
	if got := infoPaths(l); !slices.Equal(got, want) {
		t.Errorf("List depth 1:\n%v\nwant\n%v", got, want)
	}
	l, _, err = d.List("docs", 0, 0) // depth 0 means 1
	if got := infoPaths(l); err != nil || !slices.Equal(got, []string{"share/docs/a.txt:file", "share/docs/b.md:file", "share/docs/deep:dir"}) {
		t.Errorf("List docs: %v %v", got, err)
	}
	l, _, err = d.List("docs", 2, 0)
	want = []string{"share/docs/a.txt:file", "share/docs/b.md:file", "share/docs/deep:dir", "share/docs/deep/c.txt:file", "share/docs/deep/er:dir"}
	if got := infoPaths(l); err != nil || !slices.Equal(got, want) {
		t.Errorf("List docs depth 2:\n%v\nwant\n%v", got, want)
	}
	l, _, err = d.List("docs/", 5, 0)
	if len(l) != 6 || err != nil {
		t.Errorf("List docs/ depth 5: %v %v", infoPaths(l), err)
	}
	// Through a link to a folder inside: listed under the link's name.
	l, _, err = d.List("link", 1, 0)
	if got := infoPaths(l); err != nil || len(got) != 3 || got[0] != "share/link/a.txt:file" {
		t.Errorf("List link: %v %v", got, err)
	}
	for _, e := range l {
		if e.Name == "" || e.Modified.IsZero() {
			t.Errorf("entry %+v", e)
		}
	}
	// Truncation.
	l, tr, err = d.List(".", 5, 4)
	if err != nil || !tr || len(l) != 4 {
		t.Errorf("List max 4: %d entries, truncated %v, %v", len(l), tr, err)
	}
	l, tr, err = d.List("docs", 1, 3)
	if err != nil || tr || len(l) != 3 {
		t.Errorf("List max = count: %d entries, truncated %v, %v", len(l), tr, err)
	}

	for _, c := range []struct {
		rel        string
		depth, max int
		kind       errs.Kind
	}{
		{".", 6, 0, errs.InvalidParams},
		{".", -1, 0, errs.InvalidParams},
		{".", 1, -1, errs.InvalidParams},
		{"top.txt", 1, 0, errs.NotDirectory},
		{"filelink", 1, 0, errs.NotDirectory},
		{"missing", 1, 0, errs.NotFound},
		{"out", 1, 0, errs.Denied},
	} {
		_, _, err := d.List(c.rel, c.depth, c.max)
		errkind.Want(t, err, c.kind, fmt.Sprintf("List(%q, %d, %d)", c.rel, c.depth, c.max))
		checkErr(t, "List", err, root)
	}
}

func TestFind(t *testing.T) {
	root, _ := makefs(t, walkTree...)
	d := openDir(t, root, "")
	for _, c := range []struct {
		rel, pattern string
		want         []string
	}{
		{".", "**/*.txt", []string{"docs/a.txt", "docs/deep/c.txt", "docs/deep/er/d.txt", "top.txt"}},
		{".", "*.txt", []string{"top.txt"}},
		{".", "./*.txt", []string{"top.txt"}},
		{".", "docs/*", []string{"docs/a.txt", "docs/b.md", "docs/deep"}},
		{".", "docs/**", []string{"docs", "docs/a.txt", "docs/b.md", "docs/deep", "docs/deep/c.txt", "docs/deep/er", "docs/deep/er/d.txt"}},
		{".", "docs/**/*.txt", []string{"docs/a.txt", "docs/deep/c.txt", "docs/deep/er/d.txt"}},
		{".", "**/deep", []string{"docs/deep"}},
		{".", "**/d?.txt", nil},
		{".", "**/[cd].txt", []string{"docs/deep/c.txt", "docs/deep/er/d.txt"}},
		{".", "link*", []string{"link"}}, // the link matches, its contents are not walked
		{".", "link/**", []string{"link"}},
		{".", "pipe", nil}, // special files never match
		{".", "out/**", []string{"out"}},
		{"docs", "*.txt", []string{"docs/a.txt"}},
		{"docs", "**/*.txt", []string{"docs/a.txt", "docs/deep/c.txt", "docs/deep/er/d.txt"}},
		{"link", "*.md", []string{"link/b.md"}},
		{"empty", "**", nil},
	} {
		got, tr, err := d.Find(c.rel, c.pattern, 0)
		if err != nil || tr || !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("Find(%q, %q) = %q, %v, %v; want %q", c.rel, c.pattern, got, tr, err, c.want)
		}
	}
	got, tr, err := d.Find(".", "**", 3)
	if err != nil || !tr || len(got) != 3 {
		t.Errorf("Find max 3: %q %v %v", got, tr, err)
	}
	for _, c := range []struct {
		rel, pattern string
		kind         errs.Kind
	}{
		{".", "", errs.InvalidParams},
		{".", "/etc/*", errs.InvalidParams},
		{".", "../*", errs.InvalidParams},
		{".", "a/../b", errs.InvalidParams},
		{".", "[", errs.InvalidParams},
		{".", "a/[x", errs.InvalidParams},
		{"top.txt", "*", errs.NotDirectory},
		{"missing", "*", errs.NotFound},
		{"out", "*", errs.Denied},
	} {
		_, _, err := d.Find(c.rel, c.pattern, 0)
		errkind.Want(t, err, c.kind, fmt.Sprintf("Find(%q, %q)", c.rel, c.pattern))
	}
	// Visible paths carry the prefix.
	share := openDir(t, root, "share")
	got, _, _ = share.Find("docs", "b.*", 0)
	if !slices.Equal(got, []string{"share/docs/b.md"}) {
		t.Errorf("Find with prefix: %q", got)
	}
}

// TestWalkCap checks that a walk stops after MaxWalkEntries entries.
func TestWalkCap(t *testing.T) {
	var layout []string
	for i := range 30 {
		layout = append(layout, fmt.Sprintf("d%02d/f%02d.txt = x", i%5, i))
	}
	root, _ := makefs(t, layout...)
	d := openDir(t, root, "")
	found := 0
	tr, err := d.walk(".", 1<<30, nil, func(name, rel string, fi os.FileInfo) bool { found++; return false })
	if err != nil || tr || found != 35 {
		t.Fatalf("full walk: %d entries, truncated %v, %v", found, tr, err)
	}
	defer func(old int) { walkLimit = old }(walkLimit)
	walkLimit = 10
	found = 0
	tr, err = d.walk(".", 1<<30, nil, func(name, rel string, fi os.FileInfo) bool { found++; return false })
	if err != nil || !tr || found != 10 {
		t.Errorf("capped walk: %d entries, truncated %v, %v", found, tr, err)
	}
	m, tr, err := d.Find(".", "**/*.none", 0)
	if err != nil || !tr || len(m) != 0 {
		t.Errorf("capped Find: %v %v %v", m, tr, err)
	}
	_, tr, err = d.Grep(".", regexp.MustCompile("nothing"), "", 0)
	if err != nil || !tr {
		t.Errorf("capped Grep: %v %v", tr, err)
	}
}

// TestWalkSeen swaps a folder for a link to its parent at the moment the
// walk is about to enter it: the walk lands in a folder it has already
// entered and must not walk it again.
func TestWalkSeen(t *testing.T) {
	root, _ := makefs(t, "a/b/c", "a/x")
	d := openDir(t, root, "")
	var got []string
	_, err := d.walk(".", 1<<30, nil, func(name, rel string, fi os.FileInfo) bool {
		got = append(got, rel)
		if rel == "a/b" {
			host := filepath.Join(root, "a", "b")
			if err := os.RemoveAll(host); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("..", host); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})
	if want := []string{"a", "a/b", "a/x"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("walk = %q, %v; want %q", got, err, want)
	}
}

// TestWalkDoesNotFollowLinks walks a tree whose links point back up.
func TestWalkDoesNotFollowLinks(t *testing.T) {
	root, _ := makefs(t, "a/b/c", "a/b/up => ../..", "a/self => .")
	d := openDir(t, root, "")
	got, tr, err := d.Find(".", "**", 0)
	want := []string{"a", "a/b", "a/b/c", "a/b/up", "a/self"}
	if err != nil || tr || !slices.Equal(got, want) {
		t.Errorf("Find in a tree with loops: %q %v %v", got, tr, err)
	}
}

func TestGrep(t *testing.T) {
	root, _ := makefs(t, walkTree...)
	long := strings.Repeat("é", 400) + "needle"
	os.WriteFile(filepath.Join(root, "long.txt"), []byte(long+"\n"), 0o644)
	d := openDir(t, root, "share")
	re := regexp.MustCompile("alpha")

	m, tr, err := d.Grep(".", re, "", 0)
	want := []Match{
		{"share/docs/a.txt", 1, "alpha"},
		{"share/docs/deep/c.txt", 1, "alpha again"},
		{"share/top.txt", 1, "alpha top"},
	}
	if err != nil || tr || !slices.Equal(m, want) {
		t.Errorf("Grep alpha: %+v %v %v", m, tr, err)
	}
	m, _, _ = d.Grep(".", regexp.MustCompile("^beta$"), "", 0)
	if !slices.Equal(m, []Match{{"share/docs/a.txt", 2, "beta"}}) {
		t.Errorf("Grep ^beta$: %+v", m)
	}
	m, _, _ = d.Grep(".", re, "docs/**/*.txt", 0)
	if len(m) != 2 || m[1].Path != "share/docs/deep/c.txt" {
		t.Errorf("Grep with glob: %+v", m)
	}
	m, _, _ = d.Grep(".", re, "./*.txt", 0)
	if len(m) != 1 || m[0].Path != "share/top.txt" {
		t.Errorf("Grep with top-level glob: %+v", m)
	}
	// Without a "/", a glob names files at any depth, as grep tools do.
	m, _, _ = d.Grep(".", re, "*.txt", 0)
	if len(m) != 3 {
		t.Errorf("Grep with a name glob: %+v", m)
	}
	m, _, _ = d.Grep(".", re, "c.*", 0)
	if len(m) != 1 || m[0].Path != "share/docs/deep/c.txt" {
		t.Errorf("Grep with a name glob for a deep file: %+v", m)
	}
	m, _, _ = d.Grep("docs", re, "", 0)
	if len(m) != 2 {
		t.Errorf("Grep in docs: %+v", m)
	}
	m, tr, _ = d.Grep(".", re, "", 2)
	if len(m) != 2 || !tr {
		t.Errorf("Grep max 2: %+v %v", m, tr)
	}
	m, tr, _ = d.Grep(".", re, "", 3)
	if len(m) != 3 || tr {
		t.Errorf("Grep max 3 of 3: %+v %v", m, tr)
	}
	// The cut line stays valid UTF-8 and within the cap.
	m, _, _ = d.Grep(".", regexp.MustCompile("needle"), "", 0)
	if len(m) != 1 || len(m[0].Text) > MaxGrepText || !strings.HasPrefix(long, m[0].Text) || len(m[0].Text) < MaxGrepText-3 {
		t.Errorf("Grep long line: %d matches, text %d bytes", len(m), len(m[0].Text))
	}
	// Single files answer what Read answers.
	m, _, err = d.Grep("top.txt", re, "", 0)
	if err != nil || !slices.Equal(m, []Match{{"share/top.txt", 1, "alpha top"}}) {
		t.Errorf("Grep one file: %+v %v", m, err)
	}
	for _, c := range []struct {
		rel  string
		kind errs.Kind
	}{
		{"bin.dat", errs.Binary},
		{"hard", errs.Denied},
		{"pipe", errs.Denied},
		{"out", errs.Denied},
		{"missing", errs.NotFound},
		{"top.txt/", errs.NotDirectory},
	} {
		_, _, err := d.Grep(c.rel, re, "", 0)
		errkind.Want(t, err, c.kind, "Grep "+c.rel)
	}
	_, _, err = d.Grep(".", nil, "", 0)
	errkind.Want(t, err, errs.InvalidParams, "Grep nil regexp")
	_, _, err = d.Grep(".", re, "[", 0)
	errkind.Want(t, err, errs.InvalidParams, "Grep bad glob")
	_, _, err = d.Grep(".", re, "", -1)
	errkind.Want(t, err, errs.InvalidParams, "Grep negative max")
}

func TestGrepDefaultsAndCaps(t *testing.T) {
	root, _ := makefs(t, "many = "+strings.Repeat("x\n", 2000))
	big, err := os.Create(filepath.Join(root, "big"))
	if err != nil {
		t.Fatal(err)
	}
	big.WriteString("x\n")
	big.Truncate(MaxGrepFileBytes + 1)
	big.Close()
	d := openDir(t, root, "")
	re := regexp.MustCompile("x")
	m, tr, err := d.Grep(".", re, "", 0)
	if err != nil || len(m) != DefaultMatches || !tr {
		t.Errorf("Grep default: %d %v %v", len(m), tr, err)
	}
	m, tr, _ = d.Grep(".", re, "", 5000)
	if len(m) != MaxMatches || !tr {
		t.Errorf("Grep capped: %d %v", len(m), tr)
	}
	for _, x := range m {
		if x.Path != "many" {
			t.Fatalf("Grep searched %s, which is over the size cap", x.Path)
		}
	}
	_, _, err = d.Grep("big", re, "", 0)
	errkind.Want(t, err, errs.TooLarge, "Grep big file")
}
