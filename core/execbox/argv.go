package execbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"corral/core/errs"
	"corral/core/paths"
)

// Inside the sandbox.
const (
	homeBase    = "/corral" // $HOME is homeBase/<user>
	shareMount  = "/share"
	sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	netinitPath = "/run/corral/netinit"
	// ProxyAddr is where a command with network finds Corral's egress
	// proxy, inside its own network namespace. One port speaks HTTP
	// (CONNECT and absolute URLs) and SOCKS5.
	ProxyAddr = "127.0.0.1:3128"
	// MaxProxyConns bounds the connections to ProxyAddr that Corral serves
	// at once for one command; each costs the daemon a descriptor. Further
	// connections wait in the sandbox's own kernel (its listen backlog, then
	// connect) until one ends.
	MaxProxyConns = 256
)

// proxyEnv points programs at the egress proxy; socks5h makes clients that
// use ALL_PROXY resolve names at the proxy (the sandbox has no DNS).
var proxyEnv = []string{
	"HTTP_PROXY", "http://" + ProxyAddr, "HTTPS_PROXY", "http://" + ProxyAddr,
	"ALL_PROXY", "socks5h://" + ProxyAddr,
	"http_proxy", "http://" + ProxyAddr, "https_proxy", "http://" + ProxyAddr,
	"all_proxy", "socks5h://" + ProxyAddr,
	"NO_PROXY", "", "no_proxy", "",
}

// File descriptors bwrap reads from (see Argv).
const (
	fdPasswd  = 3
	fdGroup   = 4
	fdInfo    = 5
	fdBlock   = 6
	fdArgs    = 7 // bwrap's options, NUL-separated (--args), so ps shows no environment or host path
	fdSeccomp = 8 // the seccomp filter (core/execbox/seccomp)
	fdEgress  = 9 // with Spec.Egress: where corral-netinit sends the listener
)

// maxArg is the longest single argument execve accepts (MAX_ARG_STRLEN
// minus the terminating NUL).
const maxArg = 128*1024 - 1

// systemDirs are bound read-only (or recreated as links) when they exist.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// reserved are sandbox paths no Mount may be at, inside or around. /tmp is
// the exception that may hold Mounts: it is a fresh tmpfs in every run, so
// nothing can be planted in it before the mount points are made.
var reserved = append(slices.Clone(systemDirs), "/etc", "/proc", "/sys", "/dev", "/tmp", shareMount, homeBase)

// etcEntries is the curated /etc: what ordinary programs read. Globs allowed.
var etcEntries = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"resolv.conf", "hosts", "host.conf", "nsswitch.conf", "gai.conf", "protocols", "services", "networks",
	"alternatives",
	"localtime", "timezone", "locale.alias", "locale.conf",
	"mime.types", "magic", "magic.mime",
	"os-release", "lsb-release", "debian_version",
	"terminfo", "fonts", "java-*",
}

var (
	userRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// plan is a validated Spec turned into what exec needs.
type plan struct {
	argv      []string
	files     [2][]byte // /etc/passwd and /etc/group
	stdin     []byte
	timeout   time.Duration
	maxOutput int
	onOutput  func(string, []byte)
	egress    func(context.Context, net.Conn)
	rlimits   []rlimit // nil: the Runner's limits
	procs     int      // the pids cgroup's limit; 0: the Runner's
	// writable are the read-write binds, which Spec.LayerDir gives
	// overlays; overlay is the spec the helper reads (layer sets it).
	writable []writableBind
	overlay  []byte
	status   *os.File // the helper's status pipe, read end (helperCmd)
	// readonly are the argv indices of read-only binds of host paths
	// outside the system view (read-only Mounts, corral-netinit, a
	// helper's binary): as root they are staged too (stagedArgv).
	readonly []int
	stage    []byte // as root: the asroot helper's spec (stagedArgv)
}

// writableBind is one read-write bind of argv: argv[idx] is its source
// (-1: none, the overlay probe). upper and work are its overlay's
// folders once layer has run.
type writableBind struct {
	host, src   string
	idx         int
	upper, work string
}

// systemView builds the read-only system arguments once.
func systemView(extra []string) ([]string, error) {
	var args []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				continue
			}
			args = append(args, "--symlink", target, d)
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// /proc/sys and /proc/sysrq-trigger read-only: no kernel tunable is
	// writable, not even those of the sandbox's own namespaces. The
	// content of /proc/sys follows the reader's namespaces, whichever
	// proc it is bound from.
	args = append(args, "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
		"--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger", "--dev", "/dev")

	args = append(args, "--dir", "/etc", "--dir", homeBase) // 0755; bwrap makes implicit parents 0700
	patterns := slices.Clone(etcEntries)
	for _, e := range extra {
		c := path.Clean(e)
		if e == "" || c != e || path.IsAbs(c) || c == "." || paths.Within(c, "..") || strings.ContainsRune(c, 0) {
			return nil, fmt.Errorf("execbox: /etc entry %q must be a clean path relative to /etc", e)
		}
		patterns = append(patterns, c)
	}
	seen := map[string]bool{}
	for _, pat := range patterns {
		matches, err := filepath.Glob(filepath.Join("/etc", pat))
		if err != nil {
			return nil, fmt.Errorf("execbox: /etc entry %q: %w", pat, err)
		}
		for _, m := range matches {
			if seen[m] || m == "/etc/passwd" || m == "/etc/group" {
				continue
			}
			if _, err := os.Stat(m); err != nil { // dangling links are left out
				continue
			}
			seen[m] = true
			args = append(args, "--ro-bind", m, m)
		}
	}
	args = append(args, "--symlink", "../proc/self/mounts", "/etc/mtab")
	return args, nil
}

// baseArgs are the flags every sandbox shares: namespaces, environment
// base, system view, private /tmp, identity files. home is $HOME inside.
func (r *Runner) baseArgs(home string) []string {
	a := make([]string, 0, 96+len(r.sysArgs))
	a = append(a, r.nsArgs...)
	a = append(a,
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--hostname", "corral",
		"--clearenv",
		"--setenv", "PATH", sandboxPath,
		"--setenv", "HOME", home,
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "TERM", "dumb",
	)
	a = append(a, r.sysArgs...)
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		a = append(a, "--perms", "1777")
		if r.limits.TmpSize > 0 {
			a = append(a, "--size", strconv.FormatInt(r.limits.TmpSize, 10))
		}
		a = append(a, "--tmpfs", dir)
	}
	a = append(a, "--remount-ro", "/dev",
		"--perms", "0644", "--file", strconv.Itoa(fdPasswd), "/etc/passwd",
		"--perms", "0644", "--file", strconv.Itoa(fdGroup), "/etc/group",
		"--info-fd", strconv.Itoa(fdInfo), "--block-fd", strconv.Itoa(fdBlock),
	)
	if r.seccomp != nil {
		a = append(a, "--seccomp", strconv.Itoa(fdSeccomp))
	}
	return a
}

// identity returns the generated /etc/passwd and /etc/group.
func (r *Runner) identity(user string) [2][]byte {
	home := homeBase + "/" + user
	var pw, gr strings.Builder
	fmt.Fprintf(&pw, "%s:x:%d:%d:%s:%s:/bin/sh\n", user, r.uid, r.gid, user, home)
	if r.uid != 65534 {
		pw.WriteString("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
	}
	fmt.Fprintf(&gr, "%s:x:%d:\n", user, r.gid)
	if r.gid != 65534 {
		gr.WriteString("nogroup:x:65534:\n")
	}
	return [2][]byte{[]byte(pw.String()), []byte(gr.String())}
}

// CheckCommand is the one check of a command line's text, before
// anything is decided or run, in the one wording agents read: not empty
// (nor only white space), no NUL byte, at most 128 KiB. Run makes it
// again (plan); a caller that decides about a command first (core/commands
// asks the owner) makes it before asking.
func CheckCommand(command string) error {
	if strings.TrimSpace(command) == "" {
		return errs.New(errs.InvalidParams, "", "command must not be empty.")
	}
	if strings.ContainsRune(command, 0) {
		return errs.New(errs.InvalidParams, "", "The command contains a NUL byte.")
	}
	if len(command) > maxArg {
		return errs.New(errs.TooLarge, "", "The command is longer than 128 KiB; write it to a file in the agent's folder and run that file instead.")
	}
	return nil
}

// plan validates s and builds the argv. With prepare it also creates the
// playground folder and the share link in the scope folder.
func (r *Runner) plan(s Spec, prepare bool) (*plan, error) {
	if err := CheckCommand(s.Command); err != nil {
		return nil, err
	}
	user := s.User
	if user == "" {
		user = "agent"
	}
	if !userRe.MatchString(user) {
		return nil, errs.New(errs.InvalidParams, "", "The user name %q is not a safe name.", user)
	}
	home := homeBase + "/" + user

	if !paths.IsCleanAbs(s.ScopeDir) || s.ScopeDir == "/" {
		return nil, fmt.Errorf("execbox: scope folder %q is not an absolute, clean path", s.ScopeDir)
	}
	scope := paths.Resolved(s.ScopeDir)
	if fi, err := os.Stat(scope); err != nil || !fi.IsDir() {
		return nil, errs.Wrap(err, errs.IO, "", "This agent's home folder is missing, so the command did not run.")
	}
	share := ""
	if s.ShareDir != "" {
		if !paths.IsCleanAbs(s.ShareDir) || s.ShareDir == "/" {
			return nil, fmt.Errorf("execbox: shared folder %q is not an absolute, clean path", s.ShareDir)
		}
		share = paths.Resolved(s.ShareDir)
		if fi, err := os.Stat(share); err != nil || !fi.IsDir() {
			return nil, errs.Wrap(err, errs.IO, "", "The shared folder is missing, so the command did not run.")
		}
		if paths.Overlap(scope, share) {
			return nil, fmt.Errorf("execbox: scope folder %q and shared folder %q overlap", scope, share)
		}
	}
	for _, h := range r.hidden {
		if paths.Within(h, scope) || (share != "" && paths.Within(h, share)) {
			return nil, errs.New(errs.Denied, "", "Commands cannot run here: the agent's folder or the shared folder contains Corral's own files.")
		}
	}
	shareLink := s.ShareLink
	if shareLink == "" {
		shareLink = "share"
	}
	if !userRe.MatchString(shareLink) {
		return nil, fmt.Errorf("execbox: share link name %q is not a safe name", shareLink)
	}

	mounts, err := r.checkMounts(s.Mounts, scope, share)
	if err != nil {
		return nil, err
	}
	envKeys, err := checkEnv(s.Env)
	if err != nil {
		return nil, err
	}
	if prepare {
		r.prepareScope(scope, share != "", shareLink)
	}
	wd, err := workingDir(s.WorkingDir, home, scope, share, shareLink, mounts)
	if err != nil {
		return nil, err
	}

	if s.Egress != nil && r.netinit == "" {
		return nil, errs.New(errs.Unavailable, "", "%s", r.netWhy)
	}
	a := []string{r.bwrap}
	a = append(a, r.baseArgs(home)...)
	for _, k := range envKeys {
		a = append(a, "--setenv", k, s.Env[k])
	}
	var writable []writableBind
	var readonly []int
	if s.Egress != nil {
		for i := 0; i < len(proxyEnv); i += 2 {
			a = append(a, "--setenv", proxyEnv[i], proxyEnv[i+1])
		}
		a = append(a, "--ro-bind", r.netinit, netinitPath)
		readonly = append(readonly, len(a)-2)
	}
	a = append(a, "--bind", scope, home)
	writable = append(writable, writableBind{host: s.ScopeDir, src: scope, idx: len(a) - 2})
	if share != "" {
		a = append(a, "--bind", share, shareMount)
		writable = append(writable, writableBind{host: s.ShareDir, src: share, idx: len(a) - 2})
	}
	for _, m := range mounts {
		op := "--ro-bind"
		if m.rw {
			op = "--bind"
		}
		a = append(a, op, m.src, m.dest)
		if m.rw {
			writable = append(writable, writableBind{host: m.host, src: m.src, idx: len(a) - 2})
		} else {
			readonly = append(readonly, len(a)-2)
		}
	}
	a = append(a, "--remount-ro", "/", "--chdir", wd, "--")
	if s.Egress != nil {
		a = append(a, netinitPath, strconv.Itoa(fdEgress), ProxyAddr, "--")
	}
	a = append(a, "/bin/sh", "-c", "--", s.Command)

	p := &plan{
		argv:      a,
		files:     r.identity(user),
		stdin:     s.Stdin,
		timeout:   s.Timeout,
		maxOutput: s.MaxOutput,
		onOutput:  s.OnOutput,
		egress:    s.Egress,
		writable:  writable,
		readonly:  readonly,
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.maxOutput <= 0 {
		p.maxOutput = DefaultMaxOutput
	}
	return p, nil
}

type bind struct {
	src, dest string
	rw        bool
	host      string // as Spec named it
}

// checkMounts validates Mounts: absolute clean paths, no overlap with the
// sandbox's own paths, with Corral's hidden paths, the scope or the shared
// folder, and no Mount inside another (a mount point must never be created
// inside a folder an agent may write). Missing folders are left out.
func (r *Runner) checkMounts(ms []Mount, scope, share string) ([]bind, error) {
	guarded := append([]string{scope}, r.hidden...)
	if share != "" {
		guarded = append(guarded, share)
	}
	var out []bind
	for _, m := range ms {
		d := m.Host
		if !paths.IsCleanAbs(d) || d == "/" {
			return nil, errs.New(errs.Denied, d, "The folder %q cannot be shown inside the sandbox: it is not an absolute, clean path.", d)
		}
		for _, res := range reserved {
			if paths.Within(res, d) || (paths.Within(d, res) && res != "/tmp") {
				return nil, errs.New(errs.Denied, d, "The folder %s cannot be shown inside the sandbox: it overlaps the sandbox's own %s.", d, res)
			}
		}
		src, err := filepath.EvalSymlinks(d)
		if err != nil {
			r.log.Warn("execbox: root left out of the sandbox", "path", d, "err", err)
			continue
		}
		for _, g := range guarded {
			if paths.Overlap(src, g) {
				return nil, errs.New(errs.Denied, d, "The folder %s cannot be shown inside the sandbox: it overlaps Corral's own files or an agent's folder.", d)
			}
		}
		for _, o := range out {
			if paths.Overlap(d, o.dest) {
				return nil, errs.New(errs.Denied, d, "The folders %s and %s cannot both be shown inside the sandbox: one lies inside the other. Keep only one of them in [[sandbox.roots]].", o.dest, d)
			}
		}
		out = append(out, bind{src: src, dest: d, rw: m.ReadWrite, host: m.Host})
	}
	return out, nil
}

// checkEnv validates the names and values of env and returns its keys sorted.
func checkEnv(env map[string]string) ([]string, error) {
	keys := make([]string, 0, len(env))
	for k, v := range env {
		if !envRe.MatchString(k) {
			return nil, errs.New(errs.InvalidParams, "", "The environment variable name %q is not valid: use letters, digits and underscores, not starting with a digit.", k)
		}
		if k == "HOME" {
			return nil, errs.New(errs.InvalidParams, "", "The environment variable HOME cannot be changed: it is always the agent's home folder.")
		}
		if strings.ContainsRune(v, 0) {
			return nil, errs.New(errs.InvalidParams, "", "The environment variable %s contains a NUL byte.", k)
		}
		if len(v) > maxArg {
			return nil, errs.New(errs.TooLarge, "", "The environment variable %s is longer than 128 KiB.", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// prepareScope creates playground/ and the link to /share in the scope
// folder when they are missing. It works through an os.Root and never
// follows what an agent planted: an existing playground of any kind is left
// alone, a link named like the share link pointing elsewhere is replaced,
// and anything else by that name is left alone.
func (r *Runner) prepareScope(scope string, withShare bool, link string) {
	root, err := os.OpenRoot(scope)
	if err != nil {
		r.log.Warn("execbox: cannot open scope folder", "path", scope, "err", err)
		return
	}
	defer root.Close()
	if err := root.Mkdir("playground", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		r.log.Warn("execbox: cannot create playground", "path", scope, "err", err)
	}
	if !withShare {
		return
	}
	fi, err := root.Lstat(link)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.log.Warn("execbox: cannot inspect share link", "path", scope, "err", err)
		return
	case fi.Mode()&fs.ModeSymlink != 0:
		if t, err := root.Readlink(link); err == nil && t == shareMount {
			return
		}
		if err := root.Remove(link); err != nil {
			r.log.Warn("execbox: cannot replace share link", "path", scope, "err", err)
			return
		}
	default:
		r.log.Info("execbox: scope holds its own file named like the share link; left alone", "path", scope)
		return
	}
	if err := root.Symlink(shareMount, link); err != nil && !errors.Is(err, fs.ErrExist) {
		r.log.Warn("execbox: cannot create share link", "path", scope, "err", err)
	}
}

// workingDir turns Spec.WorkingDir into the --chdir path, checking on the
// host side that the folder exists. It may be relative to $HOME, "~/…", or
// an absolute path inside $HOME, /share or a Mount.
func workingDir(dir, home, scope, share, shareLink string, mounts []bind) (string, error) {
	if dir == "" || dir == "." || dir == "~" {
		return home, nil
	}
	if strings.ContainsRune(dir, 0) {
		return "", errs.New(errs.InvalidParams, "", "The working directory contains a NUL byte.")
	}
	leaves := errs.New(errs.Denied, dir, "The working directory must be inside the home folder, the shared folder or a configured root: %s", dir)

	// base is where the folder lies inside the sandbox: $HOME, /share or a
	// Mount; rel is its path below base, hostRoot the host folder of base.
	var base, rel, hostRoot string
	switch {
	case strings.HasPrefix(dir, "~/"):
		base, rel = home, path.Clean(strings.TrimPrefix(dir, "~/"))
	case path.IsAbs(dir):
		c := path.Clean(dir)
		switch {
		case paths.Within(c, home):
			base = home
		case share != "" && paths.Within(c, shareMount):
			base, hostRoot = shareMount, share
		default:
			for _, m := range mounts {
				if paths.Within(c, m.dest) {
					base, hostRoot = m.dest, m.src
					break
				}
			}
		}
		if base == "" {
			return "", leaves
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(c, base), "/")
	default:
		base, rel = home, path.Clean(dir)
	}
	if paths.Within(rel, "..") {
		return "", leaves
	}
	if rel == "" {
		rel = "."
	}
	inside := path.Join(base, rel)
	if base == home {
		hostRoot = scope
		// $HOME/<shareLink> is the link to /share.
		if share != "" && paths.Within(rel, shareLink) {
			hostRoot, rel = share, strings.TrimPrefix(strings.TrimPrefix(rel, shareLink), "/")
		}
	}
	if rel == "" || rel == "." {
		return inside, nil
	}
	root, err := os.OpenRoot(hostRoot)
	if err != nil {
		return "", errs.New(errs.InvalidParams, dir, "Working directory does not exist: %s", dir)
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	switch {
	case err == nil && !fi.IsDir():
		return "", errs.New(errs.InvalidParams, dir, "Working directory is not a folder: %s", dir)
	case err == nil:
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", errs.New(errs.InvalidParams, dir, "Working directory does not exist: %s", dir)
	default:
		// A link that leaves the folder on the host side (for example to
		// /share) may still be valid inside the sandbox, where it resolves
		// within the sandbox's own view; bwrap's --chdir decides.
	}
	return inside, nil
}
