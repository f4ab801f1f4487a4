// Package overlay holds the pieces of execbox's overlays (Spec.LayerDir)
// and of its runs as root that need no Runner: the layer folders and the
// spec corral-netinit reads, the staging of host paths as root, the
// helper's arguments and credentials, and the two things a caller needs
// after a run (IsWhiteout, RemoveLayers).
//
// # Overlays
//
// bubblewrap 0.8 has no --overlay, and the sandbox itself may not mount
// anything, so corral-netinit's "overlay" mode does it one step earlier:
// execbox starts it in a new user and mount namespace mapped to the
// owner's own uid and gid, with CAP_SYS_ADMIN and the file capabilities
// overlayfs works with as ambient capabilities (HelperAttr); it mounts an
// overlay on a "merged" folder in LayerDir for each writable folder
// (lower = the real folder; Prepare makes the folders and the spec),
// drops every capability and execs bwrap with Corral's unchanged options
// except that the merged folders are the sources of the read-write binds.
// The mounts exist only in that namespace. The real folders are never
// written during the run; the upper layers hold everything the command
// wrote.
//
// # As root
//
// As root, no process of a command may be host root. Every sandbox is
// started by corral-netinit's asroot mode (app/netinit), which runs
// bubblewrap as uid 0 of a user namespace of its own whose only mapping
// is 0 → DropID (and gid 0 → DropID): an unprivileged host user that owns
// nothing, holds no file and appears in no passwd. The command keeps
// seeing itself as uid 0 (as it did when Corral ran as root), with no
// capability, and its /proc/self/uid_map reads "0 DropID 1".
//
// That user cannot walk Corral's folders (/root, the data folder, a
// test's 0700 temporary folder), so the helper stages every host path
// bubblewrap binds, outside the system view, at /sys/N (StageDir) in its
// own mount namespace (Stage): a read-only one as a plain bind, a
// writable one (the scope, the shared folder, a read-write Mount) as an
// id-mapped mount whose mapping is the sandbox's own: what is root's on
// disk is the command's, and what the command creates is root's on disk,
// owned as Corral's other files are, with no step after the run. With
// Spec.LayerDir the id-mapped folder is the overlay's lower layer; the
// upper layer is owned by DropID (overlayfs creates with the caller's
// ids) and the files the command leaves there are given to Corral's uid
// when they are applied (core/commands).
//
// # What it guarantees, and what not
//
// Prepare makes every layer's folders and refuses a path overlayfs could
// not be given (a comma, colon, backslash or newline in it), removing
// what it made; Stage places each path once, in the order given, and the
// spec it writes is what corral-netinit's asroot mode reads. Nothing
// here mounts anything, starts a process or checks that the kernel lets
// overlays be used: execbox does that (Runner.ProbeOverlay, and the
// helper's status byte on each run). RemoveLayers does its best and
// reports nothing. On systems other than Linux there are no overlays:
// IsWhiteout reports false and the rest is not built.
package overlay

import (
	"errors"
	"strconv"
)

// ErrHelper: the overlay helper stopped before bubblewrap started.
var ErrHelper = errors.New("the overlay helper failed")

// StageDir is where, as root, the asroot helper shows the host paths
// bubblewrap binds (a tmpfs over /sys in the helper's mount namespace).
const StageDir = "/sys"

// DropID is the unprivileged host uid and gid that commands run as when
// Corral runs as root (see "As root").
const DropID = 2147483646

// IDMapFailed is the owner's sentence when, as root, the kernel or the
// file system refuses the id-mapped mounts (the helper's status byte 'I').
const IDMapFailed = "Corral runs as root, and runs commands as an unprivileged user who sees the agent's folders through id-mapped mounts; the kernel or the file system of these folders does not support them (Linux 5.12 or later, and ext4, xfs, btrfs or tmpfs), so the command did not run. Run Corral as an ordinary user, or keep its folders on such a file system."

// HelperArgs are corral-netinit's arguments to run argv (bwrap's, or a
// probe's) with its spec on descriptor specFD and its status pipe on
// statusFD: the overlay mode, or as root the asroot mode.
func HelperArgs(asRoot bool, specFD, statusFD int, argv []string) []string {
	if asRoot {
		id := strconv.Itoa(DropID)
		return append([]string{"asroot", id, id, strconv.Itoa(specFD), strconv.Itoa(statusFD), "--"}, argv...)
	}
	return append([]string{"overlay", strconv.Itoa(specFD), strconv.Itoa(statusFD), "--"}, argv...)
}

// Stage builds the asroot helper's spec: each path added is given its
// place under StageDir, in order.
type Stage struct {
	spec []byte
	n    int
}

func (s *Stage) field(v string) { s.spec = append(append(s.spec, v...), 0) }

func (s *Stage) place() string {
	p := StageDir + "/" + strconv.Itoa(s.n)
	s.n++
	return p
}

// Overlay stages a writable folder as an overlay whose lower layer is
// src (id-mapped), and returns its place.
func (s *Stage) Overlay(src, upper, work string) string {
	s.field("o")
	s.field(src)
	s.field(upper)
	s.field(work)
	return s.place()
}

// IDMapped stages a writable folder as an id-mapped mount of src.
func (s *Stage) IDMapped(src string) string {
	s.field("i")
	s.field(src)
	return s.place()
}

// Bind stages a read-only folder as a plain bind of src.
func (s *Stage) Bind(src string) string {
	s.field("b")
	s.field(src)
	return s.place()
}

// Spec is the spec the helper reads.
func (s *Stage) Spec() []byte { return s.spec }
