//go:build linux

package execbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"corral/core/errs"
	"corral/core/execbox/execboxtest"
	"corral/core/testkit/errkind"
	"corral/core/testkit/needs"
	"corral/core/testkit/poll"
)

// These tests run real bubblewrap. They fail when it is missing, except
// under -short, where they skip saying why.

func newRunner(t testing.TB, opts Options) *Runner {
	t.Helper()
	needs.Tool(t, "bwrap", "bubblewrap")
	if opts.NetInit == "" && os.Getuid() == 0 {
		opts.NetInit = execboxtest.NetInit(t) // as root, every sandbox starts through it
	}
	r, err := NewRunner(opts)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, why := r.Available(); !ok {
		t.Fatalf("sandbox unavailable: %s", why)
	}
	return r
}

// box is a temporary Corral home: corral/config.toml and secret.key next to
// the sandbox base, which holds scope alice (the one under test), scope bob
// and the shared folder; plus a folder outside everything.
type box struct {
	corral, base, scope, other, share, outside string
}

func newBox(t testing.TB) box {
	t.Helper()
	d := t.TempDir()
	b := box{
		corral:  filepath.Join(d, "corral"),
		outside: filepath.Join(d, "outside"),
	}
	b.base = filepath.Join(b.corral, "sandbox")
	b.scope = filepath.Join(b.base, "alice")
	b.other = filepath.Join(b.base, "bob")
	b.share = filepath.Join(b.base, "share")
	for _, p := range []string{b.scope, b.other, b.share, b.outside} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func (b box) spec(cmd string) Spec {
	return Spec{Command: cmd, ScopeDir: b.scope, ShareDir: b.share, User: "alice", Timeout: 30 * time.Second}
}

func (b box) opts() Options { return Options{Hidden: []string{b.corral}} }

func run(t testing.TB, r *Runner, s Spec) Result {
	t.Helper()
	res, err := r.Run(t.Context(), s)
	if err != nil {
		t.Fatalf("Run(%q): %v", s.Command, err)
	}
	return res
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEchoAndExitCodes(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	cases := []struct {
		cmd            string
		stdout, stderr string
		code           int
		signal         string
	}{
		{cmd: "echo hello", stdout: "hello\n"},
		{cmd: "exit 3", code: 3},
		{cmd: "false", code: 1},
		{cmd: "echo oops >&2; exit 1", stderr: "oops\n", code: 1},
		{cmd: "printf 'a b'; printf 'c' >&2", stdout: "a b", stderr: "c"},
		{cmd: "kill -TERM $$", code: 143, signal: "SIGTERM"},
		{cmd: "kill -KILL $$", code: 137, signal: "SIGKILL"},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			res := run(t, r, b.spec(c.cmd))
			if res.Stdout != c.stdout || res.Stderr != c.stderr || res.ExitCode != c.code || res.Signal != c.signal {
				t.Errorf("got stdout %q stderr %q code %d signal %q; want %q %q %d %q",
					res.Stdout, res.Stderr, res.ExitCode, res.Signal, c.stdout, c.stderr, c.code, c.signal)
			}
			if res.TimedOut || res.Cancelled || res.Truncated {
				t.Errorf("unexpected flags: %+v", res)
			}
		})
	}
}

func TestHomeAndIdentity(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	res := run(t, r, b.spec(`echo "$HOME"; pwd; id -un; cat /etc/passwd; hostname`))
	lines := strings.Split(res.Stdout, "\n")
	if len(lines) < 4 || lines[0] != "/corral/alice" || lines[1] != "/corral/alice" || lines[2] != "alice" {
		t.Fatalf("got %q (stderr %q)", res.Stdout, res.Stderr)
	}
	want := fmt.Sprintf("alice:x:%d:%d:alice:/corral/alice:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", os.Getuid(), os.Getgid())
	if got := strings.Join(lines[3:len(lines)-2], "\n") + "\n"; got != want {
		t.Errorf("passwd %q, want %q", got, want)
	}
	if lines[len(lines)-2] != "corral" {
		t.Errorf("hostname: %q", res.Stdout)
	}
}

func TestFilesAndShare(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	res := run(t, r, b.spec(`echo data > made.txt && echo p > playground/p.txt && echo s > /share/s.txt && cat share/s.txt && readlink share && ls -d /share playground`))
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	if res.Stdout != "s\n/share\n/share\nplayground\n" {
		t.Errorf("stdout %q", res.Stdout)
	}
	for p, want := range map[string]string{
		filepath.Join(b.scope, "made.txt"):         "data\n",
		filepath.Join(b.scope, "playground/p.txt"): "p\n",
		filepath.Join(b.share, "s.txt"):            "s\n",
	} {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v", p, got, err)
		}
	}
	fi, err := os.Stat(filepath.Join(b.scope, "playground"))
	if err != nil || !fi.IsDir() {
		t.Errorf("playground on host: %v", err)
	}
}

func TestShareLinkRepaired(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	link := filepath.Join(b.scope, "share")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	run(t, r, b.spec("true"))
	if got, _ := os.Readlink(link); got != "/share" {
		t.Errorf("link points to %q", got)
	}

	// A real folder by that name is the scope's own: left alone.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(link, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(link, "mine"), "x")
	run(t, r, b.spec("true"))
	if _, err := os.Stat(filepath.Join(link, "mine")); err != nil {
		t.Errorf("own folder touched: %v", err)
	}
}

func TestWorkingDir(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	if err := os.MkdirAll(filepath.Join(b.scope, "playground", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(b.share, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(b.scope, "file.txt"), "x")

	valid := map[string]string{
		"":                          "/corral/alice",
		".":                         "/corral/alice",
		"~":                         "/corral/alice",
		"playground":                "/corral/alice/playground",
		"playground/":               "/corral/alice/playground",
		"playground/sub":            "/corral/alice/playground/sub",
		"playground/sub/..":         "/corral/alice/playground",
		"~/playground":              "/corral/alice/playground",
		"/corral/alice/playground":  "/corral/alice/playground",
		"share/docs":                "/corral/alice/share/docs",
		"/corral/alice/share/docs":  "/corral/alice/share/docs",
		"share":                     "/corral/alice/share",
		"/share/docs":               "/share/docs",
		"/corral/alice/../alice":    "/corral/alice",
		"./playground/./sub/../sub": "/corral/alice/playground/sub",
	}
	for wd, want := range valid {
		t.Run("valid "+wd, func(t *testing.T) {
			s := b.spec("pwd")
			s.WorkingDir = wd
			res := run(t, r, s)
			if strings.TrimSpace(res.Stdout) != want {
				t.Errorf("pwd %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
			}
		})
	}
	bad := []struct {
		wd   string
		kind errs.Kind
		msg  string
	}{
		{"nope", errs.InvalidParams, "Working directory does not exist: nope"},
		{"playground/nope", errs.InvalidParams, "Working directory does not exist: playground/nope"},
		{"file.txt/x", errs.InvalidParams, "Working directory does not exist: file.txt/x"},
		{"file.txt", errs.InvalidParams, "Working directory is not a folder: file.txt"},
		{"share/nope", errs.InvalidParams, "Working directory does not exist: share/nope"},
		{"/corral/alice/share/nope", errs.InvalidParams, "Working directory does not exist: /corral/alice/share/nope"},
		{"/share/nope", errs.InvalidParams, "Working directory does not exist: /share/nope"},
		{"/share/..", errs.Denied, ""},
		{"..", errs.Denied, ""},
		{"../bob", errs.Denied, ""},
		{"playground/../../bob", errs.Denied, ""},
		{"~/../bob", errs.Denied, ""},
		{"/etc", errs.Denied, ""},
		{"/corral/bob", errs.Denied, ""},
		{"/corral", errs.Denied, ""},
		{b.other, errs.Denied, ""},
		{"/", errs.Denied, ""},
		{"a\x00b", errs.InvalidParams, ""},
	}
	for _, c := range bad {
		t.Run("bad "+c.wd, func(t *testing.T) {
			s := b.spec("pwd")
			s.WorkingDir = c.wd
			_, err := r.Run(t.Context(), s)
			e := errkind.Want(t, err, c.kind)
			if c.msg != "" && e.Msg != c.msg {
				t.Errorf("message %q, want %q", e.Msg, c.msg)
			}
		})
	}
}

// TestNothingOutsideVisible plants markers in Corral's own folder next to
// the base, in another scope under the same base, in a folder outside, and
// in the real home of this process, and looks for them from inside.
func TestNothingOutsideVisible(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	tag := strconv.FormatUint(rand.Uint64(), 36)
	content := "MARKER-" + tag
	// The pattern searched for must not itself appear in a command line
	// the search could read (/proc/*/cmdline).
	pattern := "MARK[E]R-" + tag

	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	places := []string{
		filepath.Join(b.corral, "marker_corral_"+tag),
		filepath.Join(b.corral, "config.toml"),
		filepath.Join(b.other, "marker_bob_"+tag),
		filepath.Join(b.outside, "marker_outside_"+tag),
		filepath.Join(realHome, "marker_realhome_"+tag),
	}
	for _, p := range places {
		writeFile(t, p, content+"\n")
		t.Cleanup(func() { os.Remove(p) })
	}

	for _, p := range places {
		res := run(t, r, b.spec("cat "+p))
		if strings.Contains(res.Stdout, content) || res.ExitCode == 0 {
			t.Errorf("cat %s: exit %d, %q", p, res.ExitCode, res.Stdout)
		}
	}

	find := b.spec("find / -name 'marker*' 2>/dev/null; echo done")
	find.Timeout = 60 * time.Second
	res := run(t, r, find)
	if res.TimedOut || !strings.HasSuffix(res.Stdout, "done\n") {
		t.Errorf("find did not finish: %+v", res)
	}
	if strings.Contains(res.Stdout, tag) {
		t.Errorf("find saw a marker:\n%s", res.Stdout)
	}

	// grep the whole tree except /usr (gigabytes, read-only, the host's
	// own) and /proc (the sandbox's own processes); bounded by the timeout.
	grep := b.spec("grep -rl --exclude-dir=usr --exclude-dir=proc '" + pattern + "' / 2>/dev/null; echo done")
	grep.Timeout = 90 * time.Second
	res = run(t, r, grep)
	if res.TimedOut || !strings.HasSuffix(res.Stdout, "done\n") {
		t.Errorf("grep did not finish: %+v", res)
	}
	if res.Stdout != "done\n" {
		t.Errorf("grep found markers:\n%s", res.Stdout)
	}

	// Scattered checks on what must be absent.
	res = run(t, r, b.spec("ls /run /sys /home /root /var /corral/bob "+realHome+" "+b.base+" 2>&1; ls /corral"))
	if strings.TrimSpace(lastLine(res.Stdout)) != "alice" {
		t.Errorf("ls /corral: %q", res.Stdout)
	}
	if strings.Count(res.Stdout, "No such file or directory") < 6 {
		t.Errorf("some of /run /sys /home /root /var /corral/bob are present:\n%s", res.Stdout)
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestProcShowsOnlySandbox(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	res := run(t, r, b.spec("cat /proc/[0-9]*/comm"))
	names := strings.Fields(res.Stdout)
	if len(names) == 0 || len(names) > 3 {
		t.Fatalf("processes visible: %q (stderr %q)", names, res.Stderr)
	}
	for _, n := range names {
		if !slices.Contains([]string{"bwrap", "sh", "cat"}, n) {
			t.Errorf("unexpected process %q in /proc", n)
		}
	}
}

func TestDescriptorsNotInherited(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	// A descriptor this process holds without close-on-exec, as a daemon
	// may inherit one from whatever started it.
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	res := run(t, r, b.spec("ls /proc/self/fd"))
	if got := strings.Fields(res.Stdout); !slices.Equal(got, []string{"0", "1", "2", "3"}) {
		t.Errorf("descriptors inside: %v", got)
	}
}

// hostListeners starts what a command must never reach: a TCP listener on
// the host's loopback and a listener on an abstract Unix socket (as X11
// and D-Bus use). hits counts connections either one accepted.
func hostListeners(t *testing.T) (tcpPort int, abstract string, hits func() int) {
	t.Helper()
	var n sync.Mutex
	count := 0
	serve := func(ln net.Listener) {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Lock()
				count++
				n.Unlock()
				c.Close()
			}
		}()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(ln)
	abstract = fmt.Sprintf("corral-test-%d", rand.Int64())
	ul, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	serve(ul)
	return ln.Addr().(*net.TCPAddr).Port, abstract, func() int {
		n.Lock()
		defer n.Unlock()
		return count
	}
}

// reachHost is a command that tries the host's loopback port and abstract
// socket and prints what got through.
func reachHost(port int, abstract string) string {
	return fmt.Sprintf(`bash -c 'echo hi > /dev/tcp/127.0.0.1/%d && echo tcp-reached'; `+
		`perl -MSocket -e 'socket(S, PF_UNIX, SOCK_STREAM, 0) or die; connect(S, pack_sockaddr_un("\0%s")) and print "unix-reached\n"'; true`, port, abstract)
}

func TestNetworkIsolated(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	port, abstract, hits := hostListeners(t)

	res := run(t, r, b.spec("tail -n +3 /proc/net/dev | cut -d: -f1"))
	if got := strings.Fields(res.Stdout); !slices.Equal(got, []string{"lo"}) {
		t.Errorf("interfaces without network: %q", got)
	}
	res = run(t, r, b.spec(reachHost(port, abstract)))
	if strings.Contains(res.Stdout, "reached") || hits() != 0 {
		t.Errorf("a command without network reached the host: %q, %d connections", res.Stdout, hits())
	}
}

func TestEgress(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.NetInit = execboxtest.NetInit(t)
	r := newRunner(t, opts)
	if ok, why := r.Network(); !ok {
		t.Fatalf("no network: %s", why)
	}
	port, abstract, hits := hostListeners(t)

	var mu sync.Mutex
	var got []string
	s := b.spec(reachHost(port, abstract) + `; env | grep -i _proxy= | sort; ` +
		`bash -c "exec 3<>/dev/tcp/127.0.0.1/3128 && echo through-proxy >&3 && head -c 3 <&3"; echo`)
	s.Egress = func(ctx context.Context, c net.Conn) {
		line, _ := bufioLine(c)
		mu.Lock()
		got = append(got, line)
		mu.Unlock()
		c.Write([]byte("ok\n"))
	}
	res := run(t, r, s)
	if strings.Contains(res.Stdout, "reached") || hits() != 0 {
		t.Errorf("a command with network reached the host: %q, %d connections", res.Stdout, hits())
	}
	for _, want := range []string{"HTTP_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128", "ALL_PROXY=socks5h://127.0.0.1:3128"} {
		if !strings.Contains(res.Stdout, want+"\n") {
			t.Errorf("missing %s in %q", want, res.Stdout)
		}
	}
	if !strings.HasSuffix(res.Stdout, "ok\n\n") {
		t.Errorf("the proxy's answer did not arrive: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []string{"through-proxy"}) {
		t.Errorf("egress saw %q", got)
	}
	if strings.Contains(res.Stderr, "corral:") {
		t.Errorf("stderr: %q", res.Stderr)
	}
}

// TestEgressEndsWithCommand: a connection still open when the command ends
// (here, a background client the command leaves behind) has its handler's
// context cancelled, and Run returns only after the handler did.
func TestEgressEndsWithCommand(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.NetInit = execboxtest.NetInit(t)
	r := newRunner(t, opts)
	returned := make(chan struct{})
	s := b.spec(`exec bash -c "exec 3<>/dev/tcp/127.0.0.1/3128; echo open >&3; head -c 2 <&3"`)
	s.Egress = func(ctx context.Context, c net.Conn) {
		defer close(returned)
		bufioLine(c)
		c.Write([]byte("go"))
		<-ctx.Done() // the command ends; the handler must be told
	}
	res := run(t, r, s)
	if res.Stdout != "go" {
		t.Errorf("stdout %q", res.Stdout)
	}
	select {
	case <-returned:
	default:
		t.Error("Run returned before the egress handler did")
	}
}

func TestEgressWithoutNetInit(t *testing.T) {
	b := newBox(t)
	r, err := NewRunner(b.opts()) // as root, no command runs at all without corral-netinit
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := r.Network(); ok || !strings.Contains(why, "corral-netinit") {
		t.Errorf("Network() = %v, %q", ok, why)
	}
	s := b.spec("true")
	s.Egress = func(context.Context, net.Conn) {}
	_, err = r.Run(t.Context(), s)
	errkind.Want(t, err, errs.Unavailable)
}

// bufioLine reads one line (without its newline) from c, byte by byte so
// that nothing after it is consumed.
func bufioLine(c net.Conn) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 4096 {
		if _, err := c.Read(one); err != nil {
			return string(b), err
		}
		if one[0] == '\n' {
			return string(b), nil
		}
		b = append(b, one[0])
	}
	return string(b), nil
}

func TestSystemReadOnly(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	for _, cmd := range []string{
		"touch /usr/x", "touch /etc/x", "echo x >> /etc/passwd", "touch /x", "mkdir /corral/bob",
		"touch /dev/x", "rm -f /etc/hosts", "ln -s / /share2",
	} {
		res := run(t, r, b.spec(cmd))
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "Read-only file system") {
			t.Errorf("%s: exit %d, stderr %q", cmd, res.ExitCode, res.Stderr)
		}
	}
	// /tmp and /dev/shm are private and writable.
	res := run(t, r, b.spec("echo t > /tmp/t && cat /tmp/t && echo s > /dev/shm/s && cat /dev/shm/s && echo x > /dev/null"))
	if res.Stdout != "t\ns\n" {
		t.Errorf("tmp: %+v", res)
	}
}

// sleeper returns a sleep argument unique to this test and a check that no
// process with it is left on the host.
func sleeper(t *testing.T) (arg string, gone func() bool) {
	arg = fmt.Sprintf("%d.%06d", 1000+rand.IntN(1000), rand.IntN(1000000))
	needle := []byte("sleep\x00" + arg + "\x00")
	return arg, func() bool {
		deadline := time.Now().Add(5 * time.Second)
		for {
			found := false
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				if _, err := strconv.Atoi(e.Name()); err != nil {
					continue
				}
				c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				if bytes.Contains(c, needle) {
					found = true
					break
				}
			}
			if !found {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	arg, gone := sleeper(t)
	s := b.spec("sleep " + arg + " & echo started; sleep 30")
	s.Timeout = time.Second
	res := run(t, r, s)
	if !res.TimedOut || res.Signal != "SIGKILL" || res.ExitCode != 137 || res.Cancelled {
		t.Errorf("result %+v", res)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("took %v", res.Duration)
	}
	if res.Stdout != "started\n" {
		t.Errorf("output before the kill lost: %q", res.Stdout)
	}
	if !gone() {
		t.Error("background process survived the timeout")
	}
}

func TestBackgroundDiesOnExit(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	arg, gone := sleeper(t)
	start := time.Now()
	res := run(t, r, b.spec("sleep "+arg+" & echo started"))
	if res.ExitCode != 0 || res.Stdout != "started\n" || time.Since(start) > 10*time.Second {
		t.Errorf("result %+v after %v", res, time.Since(start))
	}
	if !gone() {
		t.Error("background process outlived the command")
	}
}

func TestCancelKillsTree(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	arg, gone := sleeper(t)
	ctx, cancel := context.WithCancel(t.Context())
	s := b.spec("sleep " + arg + " & echo started; sleep 30")
	s.OnOutput = func(string, []byte) { cancel() } // cancel once it is running
	res, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.Signal != "SIGKILL" || res.Duration > 10*time.Second {
		t.Errorf("result %+v", res)
	}
	if !gone() {
		t.Error("background process survived cancellation")
	}
}

func TestOutputTruncated(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	s := b.spec("head -c 5000000 /dev/zero | tr '\\0' a; echo tail >&2")
	s.MaxOutput = 1 << 20
	res := run(t, r, s)
	if len(res.Stdout) != 1<<20 || !res.Truncated || strings.Trim(res.Stdout, "a") != "" {
		t.Errorf("stdout %d bytes, truncated %v", len(res.Stdout), res.Truncated)
	}
	if res.Stderr != "tail\n" || res.ExitCode != 0 {
		t.Errorf("stderr %q exit %d", res.Stderr, res.ExitCode)
	}

	// A cut never splits a UTF-8 sequence.
	s = b.spec("printf 'aé%.0s' $(seq 100)")
	s.MaxOutput = 5
	res = run(t, r, s)
	if res.Stdout != "aéa" || !res.Truncated {
		t.Errorf("utf-8 cut: %q", res.Stdout)
	}
}

func TestStreaming(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	type chunk struct {
		stream, data string
		at           time.Time
	}
	var mu sync.Mutex
	var chunks []chunk
	s := b.spec("echo first; echo err1 >&2; sleep 1; echo second; printf 'caf\\303'; sleep 0.2; printf '\\251\\n'")
	s.OnOutput = func(stream string, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, chunk{stream, string(data), time.Now()})
	}
	res := run(t, r, s)
	returned := time.Now()
	mu.Lock()
	defer mu.Unlock()
	var out, errOut strings.Builder
	for _, c := range chunks {
		if c.stream == "stdout" {
			out.WriteString(c.data)
		} else {
			errOut.WriteString(c.data)
		}
		if strings.HasSuffix(c.data, "\303") {
			t.Errorf("chunk ends inside a UTF-8 sequence: %q", c.data)
		}
	}
	if out.String() != res.Stdout || errOut.String() != res.Stderr || res.Stdout != "first\nsecond\ncafé\n" {
		t.Errorf("streamed %q / %q, result %q / %q", out.String(), errOut.String(), res.Stdout, res.Stderr)
	}
	i := slices.IndexFunc(chunks, func(c chunk) bool { return c.stream == "stdout" })
	if i < 0 || chunks[i].data != "first\n" || returned.Sub(chunks[i].at) < 800*time.Millisecond {
		t.Errorf("first chunk did not arrive before the command finished: %+v", chunks)
	}
}

func TestStdin(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	s := b.spec("cat; echo end")
	s.Stdin = []byte("hello\n")
	if res := run(t, r, s); res.Stdout != "hello\nend\n" {
		t.Errorf("with stdin: %q", res.Stdout)
	}
	s.Stdin = nil
	if res := run(t, r, s); res.Stdout != "end\n" {
		t.Errorf("without stdin: %q", res.Stdout)
	}
	s = b.spec("true") // stdin larger than a pipe buffer, never read
	s.Stdin = bytes.Repeat([]byte("x"), 1<<20)
	if res := run(t, r, s); res.ExitCode != 0 {
		t.Errorf("unread stdin: %+v", res)
	}
}

func TestEnvironment(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	t.Setenv("CORRAL_TEST_SECRET", "hunter2-secret")
	s := b.spec("env")
	s.Env = map[string]string{"FOO": "bar baz", "LANG": "C", "OPT": "--bind"}
	res := run(t, r, s)
	if strings.Contains(res.Stdout, "hunter2") || strings.Contains(res.Stdout, "CORRAL_TEST_SECRET") {
		t.Errorf("daemon environment leaked:\n%s", res.Stdout)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		k, _, _ := strings.Cut(l, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	if want := []string{"FOO", "HOME", "LANG", "OPT", "PATH", "PWD", "TERM"}; !slices.Equal(names, want) {
		t.Errorf("environment %v, want %v", names, want)
	}
	if !strings.Contains(res.Stdout, "FOO=bar baz\n") || !strings.Contains(res.Stdout, "LANG=C\n") || !strings.Contains(res.Stdout, "OPT=--bind\n") {
		t.Errorf("env: %s", res.Stdout)
	}

	for _, bad := range []map[string]string{
		{"HOME": "/"}, {"1X": "a"}, {"A-B": "a"}, {"": "a"}, {"A=B": "a"}, {"X": "a\x00b"}, {"--bind": "/"},
	} {
		s := b.spec("env")
		s.Env = bad
		_, err := r.Run(t.Context(), s)
		errkind.Want(t, err, errs.InvalidParams)
	}
}

func TestProcessLimit(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.Limits.Procs = 64
	r := newRunner(t, opts)
	t.Log("process limit:", r.ProcessLimit())
	if os.Getuid() == 0 && r.procs.Cgroup == nil {
		t.Fatal("running as root without a writable pids cgroup: no process limit can be enforced here")
	}
	s := b.spec("i=0; while [ $i -lt 500 ]; do sleep 20 & i=$((i+1)); echo $i > count; done; echo finished")
	s.Timeout = 60 * time.Second
	res := run(t, r, s)
	n, _ := os.ReadFile(filepath.Join(b.scope, "count"))
	count, _ := strconv.Atoi(strings.TrimSpace(string(n)))
	if res.TimedOut || strings.Contains(res.Stdout, "finished") || count >= 500 || count > 64 {
		t.Errorf("fork loop not stopped: count %d, %+v", count, res)
	}
	if !strings.Contains(strings.ToLower(res.Stderr), "fork") {
		t.Errorf("stderr does not mention fork: %q", res.Stderr)
	}
}

func TestFileSizeLimit(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.Limits.FileSize = 16 << 20
	r := newRunner(t, opts)
	res := run(t, r, b.spec("head -c 2G /dev/zero > big"))
	if res.Signal != "SIGXFSZ" || res.ExitCode != 128+25 {
		t.Errorf("result %+v", res)
	}
	fi, err := os.Stat(filepath.Join(b.scope, "big"))
	if err != nil || fi.Size() > 16<<20 {
		t.Errorf("big: %v %v", fi.Size(), err)
	}
}

func TestMemoryLimit(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.Limits.Memory = 64 << 20
	r := newRunner(t, opts)
	res := run(t, r, b.spec(`x=$(head -c 300000000 /dev/zero | tr '\0' a); echo ${#x}`))
	if res.ExitCode == 0 || strings.Contains(res.Stdout, "300000000") {
		t.Errorf("memory not limited: %+v", res)
	}
}

func TestCommandNeverAnOption(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	for _, cmd := range []string{"--version", "-x", "--bind / /x", "--", "-c id", "--help"} {
		res := run(t, r, b.spec(cmd))
		if res.ExitCode != 127 || strings.Contains(res.Stdout+res.Stderr, "bubblewrap") || strings.Contains(res.Stdout, "uid=") {
			t.Errorf("%q: %+v", cmd, res)
		}
	}
	for _, cmd := range []string{"", "  ", "a\x00b"} {
		_, err := r.Run(t.Context(), b.spec(cmd))
		errkind.Want(t, err, errs.InvalidParams)
	}
	_, err := r.Run(t.Context(), b.spec(strings.Repeat("x", 200<<10)))
	errkind.Want(t, err, errs.TooLarge)
}

func TestMounts(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	ro := filepath.Join(b.outside, "ro")
	rw := filepath.Join(b.outside, "rw")
	for _, d := range []string{ro, rw} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ro, "in.txt"), "readable\n")
	s := b.spec(fmt.Sprintf("cat %s/in.txt; touch %s/new 2>&1; echo w > %s/out.txt; ls %s", ro, ro, rw, b.outside))
	s.Mounts = []Mount{{Host: ro}, {Host: rw, ReadWrite: true}, {Host: filepath.Join(b.outside, "missing")}}
	res := run(t, r, s)
	if !strings.HasPrefix(res.Stdout, "readable\n") || !strings.Contains(res.Stdout, "Read-only file system") {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(rw, "out.txt")); string(got) != "w\n" {
		t.Errorf("rw mount not written: %q", got)
	}
	if !strings.HasSuffix(res.Stdout, "ro\nrw\n") {
		t.Errorf("parent of mounts shows more than the mounts: %q", res.Stdout)
	}

	bad := []string{
		"/", "relative", b.outside + "/../outside", "/usr", "/usr/share", "/etc", "/etc/ssl", "/proc", "/dev", "/tmp",
		"/share", "/corral", "/corral/alice", "/lib", b.corral, b.base, b.scope, b.other, b.share,
		filepath.Dir(b.corral), // contains Corral's own folder
	}
	for _, m := range bad {
		s := b.spec("true")
		s.Mounts = []Mount{{Host: m}}
		_, err := r.Run(t.Context(), s)
		errkind.Want(t, err, errs.Denied)
	}
	// Nested mounts: a mount point would be created inside another mount.
	s = b.spec("true")
	s.Mounts = []Mount{{Host: b.outside, ReadWrite: true}, {Host: ro}}
	_, err := r.Run(t.Context(), s)
	errkind.Want(t, err, errs.Denied)

	// A link into Corral's own folder is followed before checking.
	link := filepath.Join(filepath.Dir(b.outside), "sneaky")
	if err := os.Symlink(b.base, link); err != nil {
		t.Fatal(err)
	}
	s = b.spec("true")
	s.Mounts = []Mount{{Host: link}}
	_, err = r.Run(t.Context(), s)
	errkind.Want(t, err, errs.Denied)
}

func TestArgv(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	s := b.spec("-x; echo hi")
	argv, err := r.Argv(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(strings.Join(argv, " "))
	tail := argv[len(argv)-5:]
	if !slices.Equal(tail, []string{"--", "/bin/sh", "-c", "--", "-x; echo hi"}) {
		t.Errorf("tail %q", tail)
	}
	if slices.Index(argv, "--") != len(argv)-5 {
		t.Error("a -- before the command")
	}
	flags := []string{"--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop"}
	if os.Getuid() == 0 {
		// bubblewrap runs in corral-netinit's user namespace and makes no
		// other (overlay.go): every other namespace, named one by one.
		flags = append(flags[1:], "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")
	}
	for _, f := range flags {
		if !slices.Contains(argv, f) {
			t.Errorf("missing %s", f)
		}
	}
	if slices.Contains(argv, "--share-net") {
		t.Error("--share-net: the host's network is never shared")
	}
	if _, err := os.Stat(filepath.Join(b.scope, "playground")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Argv touched the scope folder")
	}
}

func TestUnavailable(t *testing.T) {
	b := newBox(t)
	r, err := NewRunner(Options{Bwrap: filepath.Join(b.outside, "no-bwrap")})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, why := r.Available(); ok || why == "" {
		t.Errorf("available with a missing bwrap: %q", why)
	}
	_, err = r.Run(t.Context(), b.spec("true"))
	errkind.Want(t, err, errs.Unavailable)

	t.Setenv("PATH", b.outside)
	r, err = NewRunner(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok, _, why := r.Available()
	if ok || !strings.Contains(why, "bubblewrap is not installed") || !strings.Contains(why, "apt install bubblewrap") {
		t.Errorf("ok %v why %q", ok, why)
	}
	_, err = r.Run(t.Context(), b.spec("true"))
	if e := errkind.Want(t, err, errs.Unavailable); e.Msg != why {
		t.Errorf("message %q", e.Msg)
	}
}

func TestAvailableVersion(t *testing.T) {
	r := newRunner(t, Options{})
	ok, v, why := r.Available()
	if !ok || !strings.HasPrefix(v, "bubblewrap ") || why != "" {
		t.Errorf("%v %q %q", ok, v, why)
	}
}

// TestNoSecretsInPs: every user of the machine can read the command lines
// of running processes. Environment values and host paths given to a
// command never appear there (bwrap reads its options from a pipe).
func TestNoSecretsInPs(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	secret := fmt.Sprintf("corral-secret-%d", rand.Int64())
	arg, _ := sleeper(t)
	s := b.spec("sleep " + arg)
	s.Env = map[string]string{"API_TOKEN": secret}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Result, 1)
	go func() { res, _ := r.Run(ctx, s); done <- res }()
	defer func() { cancel(); <-done }()
	var lines []string
	poll.Eventually(t, 10*time.Second, func() bool {
		lines = cmdlines(t)
		return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "sleep "+arg) && strings.HasPrefix(l, "/bin/sh") })
	}, "the command to show up")
	for _, l := range lines {
		if strings.Contains(l, secret) || strings.Contains(l, b.scope) {
			t.Errorf("a command line shows a secret or host path: %q", l)
		}
	}
}

// cmdlines reads every process's command line, arguments joined by spaces.
func cmdlines(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(b) > 0 {
			out = append(out, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
		}
	}
	return out
}

// TestSeccomp: inside the sandbox the system calls core/execbox/seccomp lists fail
// with EPERM, new user namespaces cannot be made even where bubblewrap
// could not disable them, and ordinary programs (threads, forks, pipes,
// sockets on the sandbox's own loopback) still work.
func TestSeccomp(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	probe := func(name string, nr uintptr) string {
		return fmt.Sprintf(`perl -e '$r = syscall(%d, 0, 0, 0, 0, 0); printf "%s %%d %%d\n", $r, $!+0';`, nr, name)
	}
	cmd := probe("io_uring_setup", unix.SYS_IO_URING_SETUP) + probe("keyctl", unix.SYS_KEYCTL) +
		probe("perf_event_open", unix.SYS_PERF_EVENT_OPEN) + probe("ptrace", unix.SYS_PTRACE) +
		probe("bpf", unix.SYS_BPF) + probe("unshare", unix.SYS_UNSHARE) +
		fmt.Sprintf(`perl -e '$r = syscall(%d, %d, 0, 0, 0, 0); printf "clone-newuser %%d %%d\n", $r, $!+0';`, unix.SYS_CLONE, unix.CLONE_NEWUSER) +
		`unshare -U true 2>/dev/null && echo UNSHARED; ` +
		`sh -c 'echo forked' | cat; python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'`
	res := run(t, r, b.spec(cmd))
	eperm := fmt.Sprint(int(unix.EPERM))
	for _, name := range []string{"io_uring_setup", "keyctl", "perf_event_open", "ptrace", "bpf", "unshare", "clone-newuser"} {
		if !strings.Contains(res.Stdout, name+" -1 "+eperm+"\n") {
			t.Errorf("%s was not refused with EPERM: %q", name, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "UNSHARED") || !strings.Contains(res.Stdout, "forked\n") || !strings.Contains(res.Stdout, "thread\n") {
		t.Errorf("%+v", res)
	}
}

// TestMemoryCgroup: where a memory cgroup can be made (here as root), a
// command's processes together cannot use more than Limits.Total, even
// when each stays under its own per-process limit.
func TestMemoryCgroup(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.Limits.Total = 96 << 20
	r := newRunner(t, opts)
	if os.Getuid() == 0 && r.memory == nil {
		t.Fatal("root, but no memory cgroup")
	}
	if r.memory == nil {
		t.Skip("no memory cgroup can be made here (not root, nothing delegated): " + r.MemoryLimit())
	}
	if !strings.Contains(r.MemoryLimit(), "96 MiB for the whole command") {
		t.Errorf("MemoryLimit: %s", r.MemoryLimit())
	}
	// Three processes of 60 MiB each: every one under RLIMIT_DATA, the
	// three together over the command's 96 MiB.
	hog := `python3 -c 'import time; x = bytearray(60 << 20); x[::4096] = b"x" * len(x[::4096]); time.sleep(3)'`
	res := run(t, r, b.spec(hog+" & a=$!; "+hog+" & b=$!; "+hog+" & c=$!; for p in $a $b $c; do wait $p; echo $?; done"))
	if !slices.Contains(strings.Fields(res.Stdout), "137") {
		t.Errorf("three 60 MiB processes ran under a 96 MiB limit (none was killed): %+v", res)
	}
	res = run(t, r, b.spec(`python3 -c 'x = bytearray(40 << 20); print("fits")'`))
	if res.Stdout != "fits\n" {
		t.Errorf("a command under the limit: %+v", res)
	}
}

// TestEgressConnectionsBounded: a command that opens connection after
// connection to its proxy address and holds them costs Corral at most
// MaxProxyConns of them at once (each is a descriptor in the daemon); the
// rest wait in the sandbox's own kernel. Without the bound one command
// could use up every descriptor of the daemon (found by attack13: 7
// processes × 4000 connections stopped Corral accepting its owner).
func TestEgressConnectionsBounded(t *testing.T) {
	b := newBox(t)
	opts := b.opts()
	opts.NetInit = execboxtest.NetInit(t)
	r := newRunner(t, opts)
	var open, most atomic.Int64
	s := b.spec(fmt.Sprintf(`python3 -c '
import socket
held = []
for i in range(%d):
    s = socket.socket()
    s.settimeout(0.05)
    try:
        s.connect(("127.0.0.1", 3128))
        held.append(s)
    except OSError:
        s.close()
print("held", len(held))
'`, MaxProxyConns+160))
	s.Egress = func(ctx context.Context, c net.Conn) {
		n := open.Add(1)
		defer open.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-ctx.Done()
	}
	res := run(t, r, s)
	if !strings.HasPrefix(res.Stdout, "held ") {
		t.Fatalf("the command did not run as expected: %+v", res)
	}
	if got := most.Load(); got > MaxProxyConns {
		t.Errorf("Corral served %d of the command's proxy connections at once; at most %d", got, MaxProxyConns)
	}
	if got := most.Load(); got < 32 {
		t.Errorf("only %d connections were served at once; the bound is too tight for real programs", got)
	}
}

// TestSocketInReadOnlyMountUnreachable: a read-only root must not become a
// way to talk to programs on the host. Linux lets connect() reach a Unix
// socket through a read-only mount (MS_RDONLY covers files, folders and
// links, not sockets), and the network namespace covers only abstract
// sockets, so a command WITHOUT network reaches any program listening on
// a socket file inside a root: an ssh-agent or tmux socket under a /tmp
// root, a docker.sock, an editor's or a dev server's socket in a project.
// Found by attack13 against a running Corral (root /tmp/attack13-root,
// "python3 -c 'socket.connect(\"/tmp/attack13-root/agent.sock\")'"
// answered by the host). The seccomp filter now refuses to create Unix
// sockets at all (socketpair still works).
func TestSocketInReadOnlyMountUnreachable(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	ro := filepath.Join(b.outside, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(ro, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var hits atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Write([]byte("host-side\n"))
			c.Close()
		}
	}()
	s := b.spec(fmt.Sprintf(`python3 -c '
import socket
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(%q); print("reached", s.recv(64))
except OSError as e:
    print("refused", e.errno)
'`, sock))
	s.Mounts = []Mount{{Host: ro}}
	res := run(t, r, s)
	if !strings.HasPrefix(res.Stdout, "refused") || hits.Load() != 0 {
		t.Errorf("a command without network reached a host program through a socket in a read-only mount: %q, %d connections", res.Stdout, hits.Load())
	}
}

// TestSocketFamilies: socket() is an allowlist. AF_INET, AF_INET6 and
// AF_NETLINK (route, sock_diag) work, so ip, ss and name lookups do;
// AF_UNIX is EPERM (socketpair still works); every other family —
// AF_VSOCK above all, which on a virtual machine reaches the host past the
// network namespace — is EAFNOSUPPORT, and other netlink protocols
// EPROTONOSUPPORT.
func TestSocketFamilies(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	probe := func(name string, family, typ, proto int) string {
		return fmt.Sprintf(`perl -e '$r = syscall(%d, %d, %d, %d); printf "%s %%s %%d\n", ($r >= 0 ? "ok" : "no"), ($r >= 0 ? 0 : $!+0)';`,
			unix.SYS_SOCKET, family, typ, proto, name)
	}
	want := map[string]string{
		"inet": "ok 0", "inet6": "ok 0", "netlink-route": "ok 0", "netlink-diag": "ok 0",
		"unix":          fmt.Sprintf("no %d", unix.EPERM),
		"vsock":         fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"packet":        fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"bluetooth":     fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"alg":           fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"key":           fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"tipc":          fmt.Sprintf("no %d", unix.EAFNOSUPPORT),
		"netlink-audit": fmt.Sprintf("no %d", unix.EPROTONOSUPPORT),
		"netlink-uevnt": fmt.Sprintf("no %d", unix.EPROTONOSUPPORT),
	}
	cmd := probe("inet", unix.AF_INET, unix.SOCK_STREAM, 0) + probe("inet6", unix.AF_INET6, unix.SOCK_DGRAM, 0) +
		probe("netlink-route", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) +
		probe("netlink-diag", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG) +
		probe("unix", unix.AF_UNIX, unix.SOCK_STREAM, 0) + probe("vsock", unix.AF_VSOCK, unix.SOCK_STREAM, 0) +
		probe("packet", unix.AF_PACKET, unix.SOCK_RAW, 0) + probe("bluetooth", unix.AF_BLUETOOTH, unix.SOCK_STREAM, 0) +
		probe("alg", unix.AF_ALG, unix.SOCK_SEQPACKET, 0) + probe("key", unix.AF_KEY, unix.SOCK_RAW, 2) +
		probe("tipc", unix.AF_TIPC, unix.SOCK_RDM, 0) +
		probe("netlink-audit", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT) +
		probe("netlink-uevnt", unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT) +
		`ip -o addr show lo | grep -q 127.0.0.1 && echo ip-ok; ` +
		`python3 -c 'import socket; socket.getaddrinfo("localhost", 80); a, b = socket.socketpair(); a.send(b"x"); print("py-ok", b.recv(1).decode())'`
	res := run(t, r, b.spec(cmd))
	got := map[string]string{}
	for line := range strings.Lines(res.Stdout) {
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			got[name] = rest
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("socket %s: got %q, want %q", name, got[name], w)
		}
	}
	if !strings.Contains(res.Stdout, "ip-ok\n") || got["py-ok"] != "x" {
		t.Errorf("ip or python sockets broken: %+v", res)
	}
}

// TestNoSetuidBits: a command cannot make a file setuid or setgid by any
// of the calls that set a mode: chmod (a copy of /usr/bin/id made 4755,
// 2755), a file created with the bits (open, mknod), or openat2.
func TestNoSetuidBits(t *testing.T) {
	b := newBox(t)
	r := newRunner(t, b.opts())
	cmd := `cp /usr/bin/id myid; chmod 4755 myid 2>/dev/null && echo chmod-suid; chmod 2755 myid 2>/dev/null && echo chmod-sgid; ` +
		`chmod u+s,g+s myid 2>/dev/null && echo chmod-symbolic; ` +
		`python3 -c 'import os; os.close(os.open("made", os.O_CREAT|os.O_WRONLY, 0o4755)); print("open-suid")' 2>/dev/null; ` +
		`python3 -c 'import os, stat; os.mknod("node", stat.S_IFREG|0o2755); print("mknod-sgid")' 2>/dev/null; ` +
		fmt.Sprintf(`perl -e '$p = "x2"; $h = "\0" x 24; $r = syscall(%d, -100, $p, $h, 24); printf "openat2 %%d\n", $!+0';`, unix.SYS_OPENAT2) +
		`chmod 0700 myid && echo chmod-plain; ls -l myid`
	res := run(t, r, b.spec(cmd))
	for _, bad := range []string{"chmod-suid", "chmod-sgid", "chmod-symbolic", "open-suid", "mknod-sgid"} {
		if strings.Contains(res.Stdout, bad+"\n") {
			t.Errorf("%s succeeded: %q", bad, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, fmt.Sprintf("openat2 %d\n", unix.ENOSYS)) || !strings.Contains(res.Stdout, "chmod-plain\n") {
		t.Errorf("%+v", res)
	}
	err := filepath.WalkDir(b.scope, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s is %v on the host", p, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNeverHostRoot: whatever uid Corral runs as (here, on CI and in
// make test: root), a command's processes are not host uid 0 and cannot
// write a kernel tunable, and what it creates in the scope and the shared
// folder is owned by Corral's uid on the host, with and without overlays.
func TestNeverHostRoot(t *testing.T) {
	b := newBox(t)
	netinit := os.Getenv("EXECBOX_TEST_NETINIT") // set by TestNeverHostRootAsUser
	if netinit == "" {
		netinit = execboxtest.NetInit(t)
	}
	r := newRunner(t, Options{Hidden: []string{b.corral}, NetInit: netinit})
	if err := r.ProbeOverlay(t.Context(), filepath.Join(b.corral, "versions", "probe")); err != nil {
		t.Fatalf("overlay probe: %v", err)
	}
	// The old files are Corral's, private to it (0600 and 0700): the
	// command must still read and change them.
	if err := os.Mkdir(filepath.Join(b.scope, "priv"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := `cat /proc/self/uid_map; echo; ` +
		`cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern 2>/dev/null && echo WROTE-core_pattern; ` +
		`cat /proc/sys/net/ipv4/ip_forward > /proc/sys/net/ipv4/ip_forward 2>/dev/null && echo WROTE-ip_forward; ` +
		`cat /proc/sys/kernel/shmmax > /proc/sys/kernel/shmmax 2>/dev/null && echo WROTE-shmmax; ` +
		`echo h > /proc/sysrq-trigger 2>/dev/null && echo WROTE-sysrq; ` +
		`cat priv/old && echo more >> priv/old && mkdir -p made/deep && echo new > made/deep/f && echo s > /share/s && ln -s f made/link && echo done`
	for _, layered := range []bool{false, true} {
		t.Run(fmt.Sprintf("layers=%v", layered), func(t *testing.T) {
			os.RemoveAll(filepath.Join(b.scope, "made"))
			os.Remove(filepath.Join(b.share, "s"))
			if err := os.WriteFile(filepath.Join(b.scope, "priv", "old"), []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s := b.spec(cmd)
			if layered {
				s.LayerDir = filepath.Join(b.corral, "versions", "run")
			}
			res := run(t, r, s)
			if res.ExitCode != 0 || !strings.HasSuffix(res.Stdout, "old\ndone\n") {
				t.Fatalf("%+v", res)
			}
			uidMap, rest, _ := strings.Cut(res.Stdout, "\n\n")
			for line := range strings.Lines(uidMap) {
				// As root the map is the command's only user namespace,
				// so its second field is the host uid. As a user,
				// bubblewrap nests one inside another ("65534 0 1": 0 is
				// the outer namespace's uid 0, the owner): there the
				// owners of the files below say which host uid it was.
				if f := strings.Fields(line); len(f) != 3 || (os.Getuid() == 0 && f[1] == "0") {
					t.Errorf("uid_map maps host uid 0 (or is odd): %q", uidMap)
				}
			}
			if strings.Contains(rest, "WROTE") {
				t.Errorf("a kernel tunable was written: %q", rest)
			}
			if layered {
				if len(res.Layers) != 2 || res.NoLayers != "" {
					t.Fatalf("layers: %+v", res)
				}
				// The real folders are untouched; the upper layer holds the
				// command's files (core/sandbox gives them to Corral's uid
				// when it applies them).
				if _, err := os.Lstat(filepath.Join(b.scope, "made")); err == nil {
					t.Errorf("the real folder was written")
				}
				if got, err := os.ReadFile(filepath.Join(res.Layers[0].Upper, "priv", "old")); err != nil || string(got) != "old\nmore\n" {
					t.Errorf("upper priv/old = %q, %v", got, err)
				}
				RemoveLayers(s.LayerDir)
				return
			}
			for _, p := range []string{"made", "made/deep", "made/deep/f", "made/link", "priv/old", "../share/s"} {
				fi, err := os.Lstat(filepath.Join(b.scope, p))
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				st := fi.Sys().(*syscall.Stat_t)
				if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
					t.Errorf("%s is owned by %d:%d, want Corral's %d:%d", p, st.Uid, st.Gid, os.Getuid(), os.Getgid())
				}
			}
		})
	}
}

// TestNeverHostRootAsUser runs TestNeverHostRoot again with Corral as an
// ordinary user (nobody, through setpriv), from a copy of this test binary
// and of corral-netinit that user can read.
func TestNeverHostRootAsUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already an ordinary user: TestNeverHostRoot is this test")
	}
	setpriv := needs.Tool(t, "setpriv", "util-linux")
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir makes them 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyExe := func(src, name string) string {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	test := copyExe(self, "execbox.test")
	netinit := copyExe(execboxtest.NetInit(t), "corral-netinit")
	cmd := exec.CommandContext(t.Context(), setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		test, "-test.run=^(TestNeverHostRoot|TestInotifyNotShared)$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "EXECBOX_TEST_NETINIT=" + netinit}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "sandbox unavailable: ") || strings.Contains(string(out), "--- SKIP: TestNeverHostRoot ") {
		// This kernel or its security module keeps ordinary users from
		// making user namespaces: Corral cannot run commands as one here.
		t.Skipf("as nobody, commands cannot run on this machine:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestNeverHostRoot ") || !strings.Contains(string(out), "--- PASS: TestInotifyNotShared ") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// TestInotifyNotShared: every command (as root: every agent's, all as the
// one host uid dropID; as a user: the owner's own uid) draws its inotify
// instances from one per-user pool (fs.inotify.max_user_instances, 128 by
// default). A command that opened them all left every other agent's
// commands without inotify ("tail: inotify cannot be used, reverting to
// polling: Too many open files"; file watchers, dev servers and build
// tools fail): the red team held 123 of the 128 with 140 `tail -f`. A
// command may hold only a share of the pool, and another command running
// beside it still gets one.
func TestInotifyNotShared(t *testing.T) {
	b := newBox(t)
	netinit := os.Getenv("EXECBOX_TEST_NETINIT") // set by TestNeverHostRootAsUser
	if netinit == "" {
		netinit = execboxtest.NetInit(t)
	}
	r := newRunner(t, Options{Hidden: []string{b.corral}, NetInit: netinit})
	pool := readInt(t, "/proc/sys/fs/inotify/max_user_instances")
	const tails = 140
	// Every tail either holds an inotify instance or says it reverted to
	// polling; the script waits until each has done one or the other.
	hog := b.spec(`touch /tmp/x; i=0
while [ $i -lt ` + strconv.Itoa(tails) + ` ]; do tail -f /tmp/x 2>/tmp/err.$i & i=$((i+1)); done
n=0; while [ $n -lt 300 ]; do
  held=$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c inotify)
  refused=$(grep -l 'reverting to polling' /tmp/err.* | wc -l)
  [ $((held+refused)) -ge ` + strconv.Itoa(tails) + ` ] && break
  sleep 0.1; n=$((n+1))
done
echo "held $held"; echo "refused $refused" >&2; sleep 60`)
	hog.Timeout = 2 * time.Minute
	if os.Getuid() != 0 {
		// As a user the share is set where the overlay is set up.
		if err := r.ProbeOverlay(t.Context(), filepath.Join(b.corral, "versions", "probe")); err != nil {
			t.Fatalf("overlay probe: %v", err)
		}
		hog.LayerDir = filepath.Join(b.corral, "versions", "run")
		t.Cleanup(func() { RemoveLayers(hog.LayerDir) })
	}
	ready := make(chan int, 1)
	var out bytes.Buffer
	hog.OnOutput = func(stream string, data []byte) {
		if stream != "stdout" {
			return
		}
		out.Write(data)
		var n int
		if _, err := fmt.Sscanf(out.String(), "held %d\n", &n); err == nil {
			select {
			case ready <- n:
			default:
			}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type ended struct {
		res Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := r.Run(ctx, hog)
		done <- ended{res, err}
	}()
	var held int
	select {
	case held = <-ready:
	case e := <-done:
		t.Fatalf("the first command ended before it was ready: %v (%+v)", e.err, e.res)
	}
	other := Spec{Command: `touch /tmp/y; timeout 1 tail -f /tmp/y 2>&1; true`, ScopeDir: b.other, ShareDir: b.share, User: "bob", Timeout: 30 * time.Second}
	res := run(t, r, other)
	cancel()
	e := <-done
	t.Logf("the first command held %d of the %d inotify instances; %s", held, pool, e.res.Stderr)
	if held > pool/8 {
		t.Errorf("one command held %d of the %d inotify instances every command shares", held, pool)
	}
	if strings.Contains(res.Stdout, "inotify") {
		t.Errorf("a command running beside it got no inotify instance: %q", res.Stdout)
	}
}

func readInt(t testing.TB, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
