//go:build unix

package fsbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// secret is the content of every file outside the root. No operation may
// ever return it.
const secret = "OUTSIDE-SECRET"

// makefs builds a tree for a test and returns the host paths of the root
// folder and of a sibling folder outside it. The layout language:
//
//	"d/"            a folder
//	"f"             a file whose content is its own name
//	"f = text"      a file holding text
//	"l => target"   a symlink to target
//	"h == target"   a hard link to target
//	"p |"           a FIFO
//
// $ROOT and $OUT in targets expand to the root and outside folders. Parent
// folders are created as needed. The outside folder always holds "secret"
// and "odir/secret", both containing the secret.
func makefs(t *testing.T, layout ...string) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "ROOT")
	outside = filepath.Join(base, "OUTSIDE")
	for _, dir := range []string{root, filepath.Join(outside, "odir")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"secret", "odir/secret"} {
		if err := os.WriteFile(filepath.Join(outside, f), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expand := strings.NewReplacer("$ROOT", root, "$OUT", outside).Replace
	for _, ent := range layout {
		name, target, kind := ent, "", ""
		for _, op := range []string{" => ", " == ", " = "} {
			if n, tg, ok := strings.Cut(ent, op); ok {
				name, target, kind = n, expand(tg), op
				break
			}
		}
		if n, ok := strings.CutSuffix(ent, " |"); ok {
			name, kind = n, "|"
		}
		host := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case kind == " => ":
			err = os.Symlink(target, host)
		case kind == " == ":
			err = os.Link(target, host)
		case kind == " = ":
			err = os.WriteFile(host, []byte(target), 0o644)
		case kind == "|":
			err = syscall.Mkfifo(host, 0o644)
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(host, 0o755)
		default:
			err = os.WriteFile(host, []byte(name), 0o644)
		}
		if err != nil {
			t.Fatalf("makefs %q: %v", ent, err)
		}
	}
	return root, outside
}

// openDir opens root as a Dir with the given agent-visible prefix.
func openDir(t *testing.T, root, prefix string) Dir {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return Dir{Root: r, Prefix: prefix}
}

// snapshot records every name, type, mode and content below dir, to prove
// that an operation changed nothing there.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", p, fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, " %s", hex.EncodeToString(sum[:8]))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkErr asserts that err is a polite *errs.Error that names no host
// path under base.
func checkErr(t *testing.T, what string, err error, base string) {
	t.Helper()
	if err == nil {
		return
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: foreign error %v escaped", what, err)
		return
	}
	if e.Msg == "" || !strings.HasSuffix(e.Msg, ".") {
		t.Errorf("%s: error %q is not a sentence", what, e.Msg)
	}
	if strings.Contains(e.Msg, base) || strings.Contains(e.Path, base) {
		t.Errorf("%s: error %q (path %q) shows a host path", what, e.Msg, e.Path)
	}
}

// An operation run by the escape table. It returns everything it got back,
// as text, so the test can look for the secret in it.
type tableOp struct {
	name string
	run  func(d, other Dir, p string) (string, error)
}

func dump(v any, err error) (string, error) {
	b, _ := json.Marshal(v)
	return string(b), err
}

var anyLine = regexp.MustCompile(`.*`)

var tableOps = []tableOp{
	{"read", func(d, _ Dir, p string) (string, error) { return dump(d.Read(p, 0, 0)) }},
	{"write", func(d, _ Dir, p string) (string, error) { return dump(d.Write(p, []byte("new"), false)) }},
	{"append", func(d, _ Dir, p string) (string, error) { return dump(d.Write(p, []byte("new"), true)) }},
	{"edit", func(d, _ Dir, p string) (string, error) { return dump(d.Edit(p, "E", "e", true)) }},
	{"delete", func(d, _ Dir, p string) (string, error) { return "", d.Delete(p, true) }},
	{"mkdir", func(d, _ Dir, p string) (string, error) { return dump(d.CreateDir(p)) }},
	{"stat", func(d, _ Dir, p string) (string, error) { return dump(d.Stat(p)) }},
	{"list", func(d, _ Dir, p string) (string, error) {
		e, tr, err := d.List(p, MaxListDepth, 0)
		return dump([]any{e, tr}, err)
	}},
	{"find", func(d, _ Dir, p string) (string, error) {
		m, tr, err := d.Find(p, "**", 0)
		return dump([]any{m, tr}, err)
	}},
	{"grep", func(d, _ Dir, p string) (string, error) {
		m, tr, err := d.Grep(p, anyLine, "", 0)
		return dump([]any{m, tr}, err)
	}},
	{"move-from", func(d, _ Dir, p string) (string, error) { return "", Move(d, p, d, "moved") }},
	{"move-to", func(d, _ Dir, p string) (string, error) { return "", Move(d, "plain", d, p) }},
	{"move-across", func(d, other Dir, p string) (string, error) { return "", Move(d, p, other, "moved") }},
	{"move-into", func(d, other Dir, p string) (string, error) { return "", Move(other, "x", d, p) }},
}

// Operations that act on a final symlink itself rather than its target,
// and what they answer for one.
var onLink = map[string]errs.Kind{
	"stat": "", "delete": "", "move-from": "", "move-to": errs.Exists, "move-into": errs.Exists, "move-across": errs.Conflict,
}

const okKind = errs.Kind("ok")

type escapeCase struct {
	name   string
	fs     []string
	path   string
	kind   errs.Kind            // what following operations answer
	final  bool                 // path's last component is the symlink: see onLink
	except map[string]errs.Kind // per-operation answers overriding the above; okKind for success
}

var escapeCases = []escapeCase{
	{name: "absolute link to outside file", fs: []string{"link => $OUT/secret"}, path: "link", kind: errs.Denied, final: true},
	{name: "absolute link to outside dir", fs: []string{"ld => $OUT/odir"}, path: "ld/secret", kind: errs.Denied},
	{name: "absolute link to outside dir itself", fs: []string{"ld => $OUT/odir"}, path: "ld", kind: errs.Denied, final: true},
	{name: "relative link climbing out", fs: []string{"link => ../OUTSIDE/secret"}, path: "link", kind: errs.Denied, final: true},
	{name: "relative dir link climbing out", fs: []string{"d/ld => ../../OUTSIDE/odir"}, path: "d/ld/secret", kind: errs.Denied},
	{name: "relative link out and back in", fs: []string{"d/up => ../../ROOT/plain"}, path: "d/up", kind: errs.Denied, final: true},
	{name: "absolute link pointing inside", fs: []string{"d/", "la => $ROOT/d"}, path: "la/new", kind: errs.Denied},
	{name: "chain leaving at the end", fs: []string{"a => b", "b => c", "c => ../OUTSIDE/secret"}, path: "a", kind: errs.Denied, final: true},
	{name: "dir chain leaving", fs: []string{"a => b", "b => ../OUTSIDE/odir"}, path: "a/secret", kind: errs.Denied},
	{name: "link loop", fs: []string{"l1 => l2", "l2 => l1"}, path: "l1", kind: errs.Denied, final: true},
	{name: "link loop in the middle", fs: []string{"l1 => l2", "l2 => l1"}, path: "l1/x", kind: errs.Denied},
	{name: "self link", fs: []string{"self => self"}, path: "self", kind: errs.Denied, final: true},
	{name: "nine links in a chain", fs: []string{"c0 => c1", "c1 => c2", "c2 => c3", "c3 => c4", "c4 => c5", "c5 => c6", "c6 => c7", "c7 => c8", "c8 => c9", "c9 => plain"},
		path: "c0", kind: errs.Denied, final: true},
	{name: "hard link from outside", fs: []string{"hard == $OUT/secret"}, path: "hard", kind: errs.Denied, except: map[string]errs.Kind{
		// Acting on the name, not the content, is harmless: the outside
		// file is left as it was.
		"write": okKind, "delete": okKind, "stat": okKind, "move-from": okKind, "move-to": errs.Exists, "move-into": errs.Exists,
		"list": errs.NotDirectory, "find": errs.NotDirectory, "mkdir": errs.Exists,
	}},
	{name: "fifo", fs: []string{"pipe |"}, path: "pipe", kind: errs.Denied, except: map[string]errs.Kind{
		"delete": okKind, "move-from": okKind, "move-to": errs.Exists, "move-into": errs.Exists,
		"list": errs.NotDirectory, "find": errs.NotDirectory, "mkdir": errs.Exists,
	}},
	{name: "dot dot", path: "..", kind: errs.InvalidPath},
	{name: "dot dot inside", path: "d/../../x", kind: errs.InvalidPath},
	{name: "absolute", path: "/etc/passwd", kind: errs.InvalidPath},
	{name: "unclean", path: "./plain", kind: errs.InvalidPath},
	{name: "empty", path: "", kind: errs.InvalidPath},
	{name: "nul", path: "pl\x00ain", kind: errs.InvalidPath},
}

// TestEscapeTable runs every escape case against every operation and
// checks the answer, that nothing outside changed and that no byte from
// outside came back.
func TestEscapeTable(t *testing.T) {
	for _, c := range escapeCases {
		for _, op := range tableOps {
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				root, outside := makefs(t, append([]string{"plain = E"}, c.fs...)...)
				otherRoot, _ := makefs(t, "x = E")
				d := openDir(t, root, "share")
				other := openDir(t, otherRoot, "")
				before := snapshot(t, outside)

				want := c.kind
				if k, ok := onLink[op.name]; ok && c.final {
					want = k
				}
				if k, ok := c.except[op.name]; ok {
					want = k
				}
				if want == okKind {
					want = ""
				}
				done := make(chan struct{})
				var out string
				var err error
				go func() {
					defer close(done)
					out, err = op.run(d, other, c.path)
				}()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s(%q) blocked", op.name, c.path)
				}
				errkind.Want(t, err, want, fmt.Sprintf("%s(%q)", op.name, c.path))
				checkErr(t, op.name, err, root)
				if strings.Contains(out, secret) || strings.Contains(out, filepath.Dir(root)) {
					t.Errorf("%s(%q) returned %s", op.name, c.path, out)
				}
				if after := snapshot(t, outside); after != before {
					t.Errorf("%s(%q) changed the outside folder:\n%s\nbecame\n%s", op.name, c.path, before, after)
				}
			})
		}
	}
}

// TestSymlinkRace swaps a folder for a symlink to outside while reads,
// lists, finds and greps run, and checks that nothing from outside ever
// comes back.
func TestSymlinkRace(t *testing.T) {
	root, outside := makefs(t, "d/secret = inside", "d/sub/secret = inside")
	d := openDir(t, root, "")
	hostD := filepath.Join(root, "d")
	moved := filepath.Join(root, "d.real")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := os.Rename(hostD, moved); err != nil {
				t.Error(err)
				return
			}
			if err := os.Symlink(filepath.Join(outside, "odir"), hostD); err != nil {
				t.Error(err)
				return
			}
			os.Remove(hostD)
			if err := os.Symlink("../OUTSIDE/odir", hostD); err != nil {
				t.Error(err)
				return
			}
			os.Remove(hostD)
			if err := os.Rename(moved, hostD); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	kinds := map[errs.Kind]int{}
	check := func(what string, v any, err error) {
		kinds[errs.KindOf(err)]++
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), outside) {
			t.Errorf("%s returned %s", what, b)
		}
		if err != nil {
			checkErr(t, what, err, root)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		n++
		r, err := d.Read("d/secret", 0, 0)
		check("read", r, err)
		r, err = d.Read("d/sub/secret", 0, 0)
		check("read sub", r, err)
		l, _, err := d.List("d", 3, 0)
		check("list", l, err)
		l, _, err = d.List(".", 3, 0)
		check("list root", l, err)
		f, _, err := d.Find(".", "**/secret", 0)
		check("find", f, err)
		g, _, err := d.Grep(".", anyLine, "", 0)
		check("grep", g, err)
		g, _, err = d.Grep("d/sub", anyLine, "", 0)
		check("grep sub", g, err)
		s, err := d.Stat("d/secret")
		check("stat", s, err)
		_, err = d.Edit("d/secret", "inside", "inside", false)
		check("edit", nil, err)
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "odir", "secret")); string(b) != secret {
		t.Errorf("outside file changed to %q", b)
	}
	t.Logf("%d rounds; answers by error kind: %v", n, kinds)
}

// TestFIFORace swaps a file for a FIFO while reads run: nothing may block.
func TestFIFORace(t *testing.T) {
	root, _ := makefs(t, "f = text", "g = text")
	d := openDir(t, root, "")
	host := filepath.Join(root, "f")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			os.Remove(host)
			syscall.Mkfifo(host, 0o644)
			os.Remove(host)
			// The Moves below may have put a FIFO back: never block on it.
			if f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644); err == nil {
				f.WriteString("text")
				f.Close()
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			d.Read("f", 0, 0)
			d.Grep(".", anyLine, "", 0)
			d.Write("f", []byte("x"), true)
			d.Edit("f", "t", "t", true)
			Move(d, "f", d, "h")
			Move(d, "h", d, "f")
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("an operation blocked on a FIFO")
	}
	stop.Store(true)
	wg.Wait()
}

func TestSpecialFiles(t *testing.T) {
	root, _ := makefs(t, "pipe |", "d/")
	d := openDir(t, root, "")
	// A unix socket, made in a short folder because of the 108-byte limit.
	short, err := os.MkdirTemp("", "s")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(short, "sock")}); err != nil {
		t.Fatal(err)
	}
	sd := openDir(t, short, "")
	for _, c := range []struct {
		d    Dir
		name string
	}{{d, "pipe"}, {sd, "sock"}} {
		_, err := c.d.Read(c.name, 0, 0)
		errkind.Want(t, err, errs.Denied, "read "+c.name)
		_, err = c.d.Stat(c.name)
		errkind.Want(t, err, errs.Denied, "stat "+c.name)
		_, err = c.d.Write(c.name, []byte("x"), true)
		errkind.Want(t, err, errs.Denied, "append "+c.name)
		_, err = c.d.Write(c.name, []byte("x"), false)
		errkind.Want(t, err, errs.Denied, "write "+c.name)
		l, _, err := c.d.List(".", 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l {
			if e.Name == c.name {
				t.Errorf("List reported special file %+v", e)
			}
		}
	}
	// A device reached through a link inside the root is refused too.
	root2, _ := makefs(t)
	if err := os.Symlink("/dev/null", filepath.Join(root2, "null")); err != nil {
		t.Fatal(err)
	}
	d2 := openDir(t, root2, "")
	_, err = d2.Read("null", 0, 0)
	errkind.Want(t, err, errs.Denied, "read absolute link to /dev/null")

	// A real device node, where the system lets us make one.
	dev := filepath.Join(root2, "zero")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
		if testing.Short() {
			t.Skipf("cannot make a device node here (%v), so the refusal of one is not checked; skipped under -short", err)
		}
		t.Fatalf("cannot make a device node (it needs root with CAP_MKNOD, as CI runs; or run with -short): %v", err)
	}
	for _, rel := range []string{"zero", "zero/"} {
		_, err = d2.Read(rel, 0, 0)
		if rel == "zero" {
			errkind.Want(t, err, errs.Denied, "read device")
		} else {
			errkind.Want(t, err, errs.NotDirectory, "read device/")
		}
	}
	_, err = d2.Write("zero", []byte("x"), true)
	errkind.Want(t, err, errs.Denied, "append to device")
	_, _, err = d2.Grep("zero", anyLine, "", 0)
	errkind.Want(t, err, errs.Denied, "grep device")
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ prefix, rel, want string }{
		{"", ".", "."},
		{"", "a/b", "a/b"},
		{"", "a/", "a"},
		{"share", ".", "share"},
		{"share", "docs/a.txt", "share/docs/a.txt"},
		{"/home/me/Docs", "x", "/home/me/Docs/x"},
		{"/", "x", "/x"},
	} {
		if got := (Dir{Prefix: c.prefix}).Visible(c.rel); got != c.want {
			t.Errorf("Dir{Prefix: %q}.Visible(%q) = %q, want %q", c.prefix, c.rel, got, c.want)
		}
	}
}

// names lists the entries of a host folder, to check for left-over temp
// files.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func readHost(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(root, rel string) bool {
	_, err := os.Lstat(path.Join(root, rel))
	return err == nil
}
