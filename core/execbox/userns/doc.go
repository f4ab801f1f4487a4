// SPDX-License-Identifier: Apache-2.0

// Package userns tells why a computer refuses the user namespaces
// execbox's sandbox needs, in one sentence for the owner.
//
// # What it guarantees, and what not
//
// Refused reads the switches that refuse them (user.max_user_namespaces,
// Debian's kernel.unprivileged_userns_clone, Ubuntu's
// kernel.apparmor_restrict_unprivileged_userns without Corral's AppArmor
// profile) and then tries one, starting a program in a new user namespace
// mapped to this process's own ids; it answers "" when none of them
// refuses. It is asked only after bubblewrap failed to make a sandbox, so
// "" does not mean commands will run: the caller then gives its own,
// more general sentence. A refusal for a reason other than those named
// (EPERM, EACCES, ENOSPC, EUSERS from the kernel) is not reported here.
// On systems other than Linux, Refused says commands need Linux.
package userns
