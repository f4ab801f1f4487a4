package overlay

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// IsWhiteout reports whether fi (from Lstat in a Layer's Upper) is
// overlayfs's mark of a deleted entry.
func IsWhiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

// Layer makes the folder d with the upper, work and merged folders of an
// overlay whose lower layer is src, and returns them with the part of the
// helper's spec that names them. Nothing is mounted: the helper does that.
// On an error the caller removes what was made (RemoveLayers).
func Layer(d, src string) (upper, work, merged string, spec []byte, err error) {
	upper, work, merged = filepath.Join(d, "u"), filepath.Join(d, "w"), filepath.Join(d, "m")
	for _, q := range []string{d, upper, work, merged} {
		if err := os.Mkdir(q, 0o700); err != nil {
			return "", "", "", nil, err
		}
	}
	for _, q := range []string{src, upper, work, merged} {
		if strings.ContainsAny(q, ",:\\\n") {
			return "", "", "", nil, fmt.Errorf("path %q cannot be given to overlayfs", q)
		}
		spec = append(append(spec, q...), 0)
	}
	return upper, work, merged, spec, nil
}

// HelperAttr is how corral-netinit is started: as root, in a new mount
// namespace (the asroot mode makes its own user namespace); otherwise in
// a new user and mount namespace mapping only the owner's uid and gid,
// holding the capabilities overlayfs needs there.
func HelperAttr(asRoot bool, uid, gid int) *syscall.SysProcAttr {
	if asRoot {
		return &syscall.SysProcAttr{
			Setpgid:    true,
			Cloneflags: unix.CLONE_NEWNS,
			Pdeathsig:  unix.SIGKILL,
		}
	}
	return &syscall.SysProcAttr{
		Setpgid:                    true,
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		// overlayfs does its copy-ups, whiteouts and work-folder renames
		// with the mounter's credentials, so the helper mounts holding
		// what that takes; they count only in its own namespace, which
		// maps nothing but the owner's ids, and it drops them all before
		// it execs bwrap.
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH,
			unix.CAP_FOWNER, unix.CAP_FSETID, unix.CAP_CHOWN, unix.CAP_MKNOD,
			// to limit the namespace's share of the per-user inotify and
			// fanotify pools (user.max_inotify_instances …)
			unix.CAP_SYS_RESOURCE},
	}
}

// RemoveLayers removes a layer folder (Spec.LayerDir, after its layers
// have been applied). The work folders overlayfs leaves have mode 0 and
// the command may have left folders without write permission, so
// permissions are opened first.
func RemoveLayers(dir string) {
	// overlayfs leaves work/work (and with volatile work/incompat) with
	// mode 0: open them first, or RemoveAll fails and the walk below runs.
	for _, pat := range []string{"*/w/work", "*/w/incompat", "*/w/incompat/*"} {
		if ms, err := filepath.Glob(filepath.Join(dir, pat)); err == nil {
			for _, m := range ms {
				_ = os.Chmod(m, 0o700)
			}
		}
	}
	if err := os.RemoveAll(dir); err == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
