package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The asroot mode runs a sandbox when Corral itself runs as root, so that
// no process of the command is ever host root:
//
//	corral-netinit asroot UID GID SPECFD STATUSFD -- PROGRAM ARGS...
//
// Corral starts it as root in a new mount namespace of its own (nothing
// it mounts reaches Corral's), with its own descriptors 3 … SPECFD-1 for
// PROGRAM (bubblewrap). It reads records from SPECFD and shows each host
// path bubblewrap will bind at /sys/N (N counts the records from 0) on a
// fresh tmpfs over /sys (bubblewrap never shows the host's /sys, and no
// Mount may lie under it), because the command's user cannot walk the
// folders above them (/root, Corral's data folder):
//
//	b PATH                a plain bind: a read-only Mount, corral-netinit, a helper binary
//	i PATH                the same folder as an id-mapped mount: files owned by root on
//	                      disk are the command's own (uid 0 inside, UID outside), and
//	                      what the command creates is owned by root on disk
//	o LOWER UPPER WORK    an overlay (userxattr, volatile) at /sys/N whose lower layer
//	                      is LOWER id-mapped as above; UPPER must be owned by UID:GID,
//	                      and what the command writes lands there owned by UID:GID
//
// Every field ends in a NUL byte. Then it starts PROGRAM in a new user
// namespace whose only mapping is uid 0 → UID and gid 0 → GID (UID and GID
// are unprivileged), as uid 0 of that namespace (so bubblewrap sets up the
// sandbox with capabilities that hold only there, and without a user
// namespace of its own: the command's /proc/self/uid_map reads "0 UID 1"),
// with user.max_user_namespaces 0 in it and a sixteenth of the host's
// per-user inotify and fanotify pools (limitShares), writes one byte (1) to STATUSFD
// once the mounts are in place, waits for PROGRAM and exits with its
// status (128+N when killed by signal N). A failure before PROGRAM starts
// prints one line and exits 125; STATUSFD then receives nothing, or 'I'
// when an id-mapped mount failed (the file system or the kernel does not
// support them).

const stageDir = "/sys"

func asroot(args []string) error {
	if len(args) < 6 || args[4] != "--" {
		return fmt.Errorf("usage: corral-netinit asroot UID GID SPECFD STATUSFD -- PROGRAM ARGS")
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(args[i])
		if err != nil || v < 0 {
			return fmt.Errorf("bad number %q", args[i])
		}
		n[i] = v
	}
	uid, gid, specFD, statusFD := n[0], n[1], n[2], n[3]
	if uid == 0 || gid == 0 || specFD < 3 || statusFD < 3 {
		return fmt.Errorf("bad ids or descriptors")
	}
	if os.Getuid() != 0 {
		return fmt.Errorf("asroot mode needs root")
	}
	status := os.NewFile(uintptr(statusFD), "status")
	spec := os.NewFile(uintptr(specFD), "spec")
	b, err := io.ReadAll(io.LimitReader(spec, maxSpec))
	spec.Close()
	if err != nil {
		return fmt.Errorf("read the spec: %w", err)
	}
	recs, err := parseSpec(b)
	if err != nil {
		return err
	}
	// Nothing mounted here may reach the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}

	// PROGRAM's process, waiting for the mounts. Its user namespace is
	// also the id-mapping of the mounts.
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return err
	}
	var pass []*os.File
	for fd := 3; fd < specFD; fd++ {
		pass = append(pass, os.NewFile(uintptr(fd), "fd"+strconv.Itoa(fd)))
	}
	// The child execs this program again through a descriptor: UID may
	// not walk the folders this program lies in.
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	syncFD := 3 + len(pass)
	child := exec.Command(fmt.Sprintf("/proc/self/fd/%d", syncFD+1), append([]string{"stage2", strconv.Itoa(syncFD), "--"}, args[5:]...)...)
	child.Args[0] = "corral-netinit"
	child.Env = os.Environ()
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.ExtraFiles = append(pass, syncR, self)
	child.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:   unix.SIGKILL,
	}
	if err := child.Start(); err != nil {
		return fmt.Errorf("start %s: %w", args[5], err)
	}
	syncR.Close()
	self.Close()
	for _, f := range pass {
		f.Close() // only the child keeps them: Corral reads EOF when the sandbox closes its ends
	}
	fail := func(mark []byte, err error) error {
		if mark != nil {
			_, _ = status.Write(mark)
		}
		_ = child.Process.Kill()
		_ = child.Wait()
		return err
	}
	ns, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", child.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(nil, fmt.Errorf("open the user namespace: %w", err))
	}
	if err := unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fail(nil, fmt.Errorf("mount the stage: %w", err))
	}
	for i, r := range recs {
		target := fmt.Sprintf("%s/%d", stageDir, i)
		mark, err := r.mount(target, ns)
		if err != nil {
			return fail(mark, err)
		}
	}
	unix.Close(ns)
	if _, err := status.Write([]byte{1}); err != nil {
		return fail(nil, fmt.Errorf("report the mounts: %w", err))
	}
	status.Close()
	if _, err := syncW.Write([]byte{1}); err != nil {
		return fail(nil, fmt.Errorf("start %s: %w", args[5], err))
	}
	syncW.Close()
	err = child.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("wait for %s: %w", args[5], err)
	}
	os.Exit(0)
	return nil
}

type record struct {
	kind  byte
	paths []string
}

func parseSpec(b []byte) ([]record, error) {
	fields := strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
	if len(b) == 0 {
		return nil, nil
	}
	var out []record
	for i := 0; i < len(fields); {
		want := map[string]int{"b": 1, "i": 1, "o": 3}[fields[i]]
		if want == 0 || i+want >= len(fields) {
			return nil, fmt.Errorf("bad spec record %q", fields[i])
		}
		r := record{kind: fields[i][0], paths: fields[i+1 : i+1+want]}
		for _, p := range r.paths {
			// overlayfs reads its options split at these characters.
			if !strings.HasPrefix(p, "/") || (r.kind == 'o' && strings.ContainsAny(p, ",:\\\n")) {
				return nil, fmt.Errorf("path %q cannot be staged", p)
			}
		}
		out = append(out, r)
		i += 1 + want
	}
	return out, nil
}

// mount puts r at target; the mark is what STATUSFD gets on failure.
func (r record) mount(target string, ns int) ([]byte, error) {
	src := r.paths[0]
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		err = os.Mkdir(target, 0o755)
	} else {
		err = os.WriteFile(target, nil, 0o644)
	}
	if err != nil {
		return nil, err
	}
	switch r.kind {
	case 'b':
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			return nil, fmt.Errorf("bind %s: %w", src, err)
		}
	case 'i':
		if err := idmap(src, target, ns); err != nil {
			return []byte{'I'}, err
		}
	case 'o':
		lower := target + ".l"
		if err := os.Mkdir(lower, 0o755); err != nil {
			return nil, err
		}
		if err := idmap(src, lower, ns); err != nil {
			return []byte{'I'}, err
		}
		// volatile: the layers are applied by Corral and thrown away.
		opts := "lowerdir=" + lower + ",upperdir=" + r.paths[1] + ",workdir=" + r.paths[2] + ",userxattr,volatile"
		if err := unix.Mount("overlay", target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return nil, fmt.Errorf("mount an overlay on %s: %w", src, err)
		}
	}
	return nil, nil
}

// idmap shows the folder src at target with the id-mapping of the user
// namespace ns: what is root's on disk is ns's uid 0 (UID outside).
func idmap(src, target string, ns int) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	defer unix.Close(fd)
	attr := &unix.MountAttr{
		Attr_set:  unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
		Userns_fd: uint64(ns),
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("id-map %s: %w", src, err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("place %s: %w", src, err)
	}
	return nil
}

// stage2 runs in the new user namespace: it waits until the mounts are in
// place, closes user namespaces to everything below it, and becomes
// PROGRAM. SYNCFD+1 is the descriptor it was started from.
//
//	corral-netinit stage2 SYNCFD -- PROGRAM ARGS...
func stage2(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("usage: corral-netinit stage2 SYNCFD -- PROGRAM ARGS")
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		return fmt.Errorf("bad descriptor %q", args[0])
	}
	var b [1]byte
	n, _ := unix.Read(fd, b[:])
	unix.Close(fd)
	unix.Close(fd + 1)
	if n != 1 {
		return fmt.Errorf("the mounts were not made")
	}
	// Like bubblewrap's --disable-userns, for this namespace itself.
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
		return fmt.Errorf("disable user namespaces: %w", err)
	}
	if err := limitShares(); err != nil {
		return err
	}
	prog := args[2]
	return fmt.Errorf("start %s: %w", prog, unix.Exec(prog, args[2:], os.Environ()))
}

// userPools are the kernel's per-user pools a command's processes draw
// from: the host's size of each (set in the initial namespace, the same
// whichever namespace reads it) and the limit of this namespace. Every
// command runs as the one host uid UID, so without a limit of its own
// one command could take a whole pool from every other agent's commands
// (140 `tail -f` held 123 of the 128 inotify instances, and tail in
// another agent's command fell back to polling).
var userPools = [][2]string{
	{"fs/inotify/max_user_instances", "user/max_inotify_instances"},
	{"fs/inotify/max_user_watches", "user/max_inotify_watches"},
	{"fs/fanotify/max_user_groups", "user/max_fanotify_groups"},
	{"fs/fanotify/max_user_marks", "user/max_fanotify_marks"},
}

// poolShare: a command may hold 1/poolShare of each pool (8 of the 128
// inotify instances by default), so one agent's commands at once
// (max_running_per_agent, 4 by default) hold at most a quarter of it.
const poolShare = 16

// limitShares limits this namespace to its share of every user pool the
// kernel has.
func limitShares() error {
	for _, p := range userPools {
		b, err := os.ReadFile("/proc/sys/" + p[0])
		if errors.Is(err, os.ErrNotExist) {
			continue // a kernel without this pool
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p[0], err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("read %s: %w", p[0], err)
		}
		err = os.WriteFile("/proc/sys/"+p[1], []byte(strconv.Itoa(max(1, n/poolShare))+"\n"), 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("limit %s: %w", p[1], err)
		}
	}
	return nil
}
