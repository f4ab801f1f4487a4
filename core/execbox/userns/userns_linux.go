// SPDX-License-Identifier: Apache-2.0

package userns

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Refused says, in one sentence for the owner, why this computer
// refuses Corral the user namespaces its sandbox needs, or "" when nothing
// here refuses them. probe is a program to start in a new user namespace
// (bubblewrap: `probe --version`). It reads the switches that refuse them
// (user.max_user_namespaces, Debian's kernel.unprivileged_userns_clone,
// Ubuntu's kernel.apparmor_restrict_unprivileged_userns) and tries one.
func Refused(probe string) string {
	const tail = ", and the sandbox needs them"
	switch {
	case sysctl("user/max_user_namespaces") == "0":
		return "Commands are unavailable: user namespaces are turned off on this computer (user.max_user_namespaces = 0)" + tail + "; turn them on (sudo sysctl -w user.max_user_namespaces=15000) and restart Corral."
	case sysctl("kernel/unprivileged_userns_clone") == "0":
		return "Commands are unavailable: this computer refuses user namespaces to ordinary programs (kernel.unprivileged_userns_clone = 0)" + tail + "; allow them (sudo sysctl -w kernel.unprivileged_userns_clone=1) and restart Corral."
	case sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1" && !ownProfile():
		return "Commands are unavailable: AppArmor lets only programs with a profile use user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)" + tail + ", and Corral's profile is not loaded; load it (sudo apparmor_parser -r /etc/apparmor.d/corral, from the corral package) and restart Corral."
	}
	if err := tryUserns(probe); err != nil {
		return "Commands are unavailable: this computer refuses Corral a user namespace (" + err.Error() + ")" + tail + "; allow unprivileged user namespaces and restart Corral."
	}
	return ""
}

// sysctl reads /proc/sys/name, "" when it does not exist.
func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ownProfile reports whether this process runs under Corral's AppArmor
// profile (packaging/apparmor).
func ownProfile() bool {
	for _, f := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if b, err := os.ReadFile(f); err == nil {
			return strings.HasPrefix(string(b), "corral")
		}
	}
	return false
}

// tryUserns starts probe --version in a new user namespace mapped to this
// process's own ids, as bubblewrap and the overlay helper make theirs.
func tryUserns(probe string) error {
	cmd := exec.Command(probe, "--version")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	var errno syscall.Errno
	if err := cmd.Run(); errors.As(err, &errno) {
		switch errno {
		case syscall.EPERM, syscall.EACCES, syscall.ENOSPC, syscall.EUSERS:
			return errno
		}
	}
	return nil // the namespace was made, or something else failed: not ours to say
}
