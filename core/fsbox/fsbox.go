// Package fsbox performs every file operation Corral offers agents, and
// performs them only through an [os.Root]: nothing here joins host path
// strings or opens a path outside the root it was given.
//
// Guarantees, for every operation on a [Dir]:
//
//   - No path leaves the root. ".." that climbs out, absolute symlinks and
//     relative symlinks whose target leaves the root answer denied; os.Root
//     checks this at every component, at the moment of the system call, so
//     an agent racing its own symlinks against Corral cannot escape.
//     Relative symlinks that stay inside are followed, at most 8 in a chain.
//   - Only regular files and folders are opened. A FIFO, socket or device
//     answers denied at once: it is refused from a stat before any open, and
//     every open uses O_NONBLOCK (and O_DIRECTORY for folders) and checks
//     the opened handle, so a special file swapped in mid-operation neither
//     blocks nor is read.
//   - A regular file with more than one hard link is never opened (denied):
//     an agent could have linked a file it should not see into its folder.
//   - Results and error messages name agent-visible paths (Dir.Prefix
//     joined with the relative path), never host paths.
//   - Writes and edits replace the file atomically: a temporary file
//     ".corral-tmp-<random>" is written in the same folder, synced, and
//     renamed into place; it is removed on failure. Write and Move (and
//     a patch, through RefuseTempName) refuse
//     to create a name starting with ".corral-tmp-" (any component), and
//     List, Find and Grep show such names like any other, so a leftover
//     is never hidden from the owner. Writing to a path whose last component is a symlink
//     writes to the file the link points at (resolved inside the root), it
//     does not replace the link. Replacing keeps the old file's permission
//     bits; a new file gets 0644. No file written, patched or moved keeps
//     a setuid, setgid or sticky bit (Move clears them from what it
//     renames, see [ClearSpecial]; a folder keeps its sticky bit only).
//   - [Dir.Stage] writes and syncs new content under a temporary name and
//     changes nothing visible until [Staged.Commit] renames it into place;
//     [Staged.Abort] removes the temporary file and the folders Stage
//     created (if still empty). A multi-file change stages every file
//     first, so a failed write leaves no file changed.
//   - Walks (List, Find, Grep) never follow symlinks, report them as type
//     "symlink", skip special files, open each folder through the root with
//     O_DIRECTORY|O_NONBLOCK, visit each folder (device and inode) at most
//     once, and stop after [MaxWalkEntries] entries with truncated set.
//
// Not guaranteed:
//
//   - os.Root does not stop at mount points: a bind mount or another file
//     system mounted inside a root is entered like a folder.
//   - Checks and uses are separate steps. A file can change between an
//     Edit's read and its write (the later write wins), a hard link can be
//     added to a file after it was opened, and a destination that appears
//     between Move's existence check and its rename is replaced. None of
//     these lets a path leave the root.
//   - During a walk, a folder swapped for a symlink to another folder inside
//     the same root may be listed under the swapped name. Walks never leave
//     the root and never revisit a folder.
//   - Hard links are only detected by link count; a file hard-linked twice
//     inside the same root is refused just like one linked from outside.
//   - Move clears the special bits of what it moves, not of the files
//     inside a moved folder.
//   - Nothing here knows about policy, scopes or approvals: the caller
//     decides which root an agent may use and with which access.
//   - Operations take no context and cannot be cancelled; walks are bounded
//     by their entry caps instead.
package fsbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"corral/core/errs"
)

// Limits.
const (
	MaxReadLines     = 2000      // lines per Read
	MaxReadBytes     = 256 << 10 // content bytes per Read
	MaxImageBytes    = 10 << 20  // larger images answer too_large
	MaxEditBytes     = 10 << 20  // larger files answer too_large to Edit
	MaxGrepFileBytes = 8 << 20   // Grep skips larger files
	MaxGrepText      = 500       // bytes of a matching line returned
	MaxMatches       = 1000      // Grep's maxMatches is capped here
	DefaultMatches   = 100       // Grep's maxMatches when 0
	MaxListDepth     = 5
	DefaultListMax   = 1000   // List's max when 0
	DefaultFindMax   = 1000   // Find's max when 0
	MaxEntries       = 10000  // List's and Find's max is capped here
	MaxWalkEntries   = 100000 // entries a single walk visits at most
	MaxSymlinks      = 8      // links followed in a chain
)

// sniffLen is how many bytes are looked at to tell text, images and binary
// files apart.
const sniffLen = 8192

// tempPrefix starts the names of Corral's temporary files.
const tempPrefix = ".corral-tmp-"

// Dir is an os.Root together with the agent-visible path of its folder.
//
// Every rel argument is a clean slash path inside the root, "." for the
// root itself (paths.Target.Rel). A single trailing "/" (paths.Target.RelSlash)
// means the path must be a folder: a file then answers not_directory. Any
// other form (absolute, "..", "./x", "a//b", empty) answers invalid_path.
type Dir struct {
	Root *os.Root
	// Prefix is the agent-visible path of the root: "" for a scope,
	// "share" for the shared folder, "/host/root" for a root. Results and
	// error paths are Prefix-joined, never host paths.
	Prefix string
}

// Visible returns the agent-visible path of rel, a slash path inside d.
func (d Dir) Visible(rel string) string {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		rel = "."
	}
	if d.Prefix == "" {
		return rel
	}
	if rel == "." {
		return d.Prefix
	}
	return path.Join(d.Prefix, rel)
}

// name checks a rel argument. A rel is a clean slash path inside the root
// ("." for the root itself); a single trailing "/" is allowed and means the
// path must be a folder. It returns the path without the slash.
func (d Dir) name(rel string) (name string, slash bool, err error) {
	name = rel
	if len(name) > 1 && strings.HasSuffix(name, "/") {
		name, slash = name[:len(name)-1], true
	}
	if !fs.ValidPath(name) || strings.ContainsAny(name, "\\\x00") {
		return "", false, errs.New(errs.InvalidPath, "", "The path is not a clean path inside the folder.")
	}
	return name, slash, nil
}

// withSlash adds back the trailing slash for calls that should let os.Root
// check that the path is a folder.
func withSlash(name string, slash bool) string {
	if slash && name != "." {
		return name + "/"
	}
	return name
}

// fail maps an error from the os package to an *errs.Error about the
// agent-visible path of name. An *errs.Error passes through unchanged.
func (d Dir) fail(err error, name string) error {
	if err == nil {
		return nil
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	v := d.Visible(name)
	switch {
	case isEscape(err):
		return errs.Wrap(err, errs.Denied, v, "%s leads outside its folder through a link, so Corral will not follow it.", v)
	case errors.Is(err, syscall.ELOOP):
		return errs.Wrap(err, errs.Denied, v, "%s goes through too many links (more than %d in a chain) or a link loop.", v, MaxSymlinks)
	case errors.Is(err, fs.ErrNotExist):
		return errs.Wrap(err, errs.NotFound, v, "There is no file or folder at %s.", v)
	case errors.Is(err, syscall.ENOTDIR):
		return errs.Wrap(err, errs.NotDirectory, v, "%s, or a folder on the way to it, is a file and not a folder.", v)
	case errors.Is(err, syscall.EISDIR):
		return errs.Wrap(err, errs.IsDirectory, v, "%s is a folder, not a file.", v)
	case errors.Is(err, syscall.ENOTEMPTY):
		return errs.Wrap(err, errs.Conflict, v, "%s is a folder that is not empty.", v)
	case errors.Is(err, fs.ErrExist):
		return errs.Wrap(err, errs.Exists, v, "Something already exists at %s.", v)
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return errs.Wrap(err, errs.Denied, v, "%s is not a regular file or folder (it is a pipe, socket or device), so Corral will not open it.", v)
	case errors.Is(err, syscall.EROFS):
		return errs.Wrap(err, errs.Denied, v, "%s is on a disk that is read-only.", v)
	case errors.Is(err, fs.ErrPermission):
		return errs.Wrap(err, errs.Denied, v, "The computer does not allow Corral to do that with %s.", v)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return errs.Wrap(err, errs.InvalidPath, v, "%s is too long for the file system.", v)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return errs.Wrap(err, errs.IO, v, "There is no space left on the disk to write %s.", v)
	case errors.Is(err, syscall.EXDEV):
		return errs.Wrap(err, errs.Conflict, v, "%s is on a different disk, so it can't be moved there.", v)
	}
	return errs.Wrap(err, errs.IO, v, "Something went wrong with %s on the computer running Corral; the operation did not complete.", v)
}

// isEscape reports whether err is os.Root's "path escapes from parent",
// which it returns for ".." above the root and for symlinks that are
// absolute or lead out of the root. The error value is not exported, so it
// is recognised by its text; TestEscapeTable fails if that ever changes.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

func (d Dir) special(name string) error {
	v := d.Visible(name)
	return errs.New(errs.Denied, v, "%s is not a regular file or folder (it is a pipe, socket or device), so Corral will not open it.", v)
}

func (d Dir) hardLinked(name string) error {
	v := d.Visible(name)
	return errs.New(errs.Denied, v, "%s has more than one name (a hard link), so Corral will not open it.", v)
}

func (d Dir) isDir(name string) error {
	v := d.Visible(name)
	return errs.New(errs.IsDirectory, v, "%s is a folder, not a file.", v)
}

func (d Dir) notDir(name string) error {
	v := d.Visible(name)
	return errs.New(errs.NotDirectory, v, "%s is a file, not a folder.", v)
}

// openRegular opens a regular file of d for reading. The path is first
// stat'ed (following symlinks inside the root) so that special files are
// refused without being opened; the open uses O_NONBLOCK so that one
// swapped in meanwhile cannot block, and the opened handle is checked
// again. slash means the agent wrote a trailing "/".
func (d Dir) openRegular(name string, slash bool) (*os.File, fs.FileInfo, error) {
	n := withSlash(name, slash)
	fi, err := d.Root.Stat(n)
	if err != nil {
		return nil, nil, d.fail(err, name)
	}
	if err := d.checkRegular(name, fi); err != nil {
		return nil, nil, err
	}
	return d.openChecked(d.Root, n, name, nil)
}

// openChecked opens n in r for reading, without blocking on a FIFO swapped
// in after a stat and without making a terminal the controlling one, and
// checks the opened handle: a regular file with one link and, when was is
// not nil, the very file an lstat described as was (else it answers
// denied as a symlink swapped in). name is n's path in d, for errors.
func (d Dir) openChecked(r *os.Root, n, name string, was fs.FileInfo) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, d.fail(err, name)
	}
	fi, err := f.Stat()
	if err == nil && was != nil && !os.SameFile(was, fi) {
		err = d.symlinked(name) // replaced between the lstat and the open
	}
	if err == nil {
		err = d.checkRegular(name, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, d.fail(err, name)
	}
	return f, fi, nil
}

func (d Dir) checkRegular(name string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return d.isDir(name)
	case !fi.Mode().IsRegular():
		return d.special(name)
	case nlink(fi) > 1:
		return d.hardLinked(name)
	}
	return nil
}

// openDir opens a folder of d for reading its entries. A file answers
// not_directory; a special file is never opened for real (O_DIRECTORY
// fails before the open of a FIFO or device would).
func (d Dir) openDir(name string) (*os.File, error) {
	f, err := d.Root.OpenFile(withSlash(name, true), os.O_RDONLY|oDirectory|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			if fi, serr := d.Root.Stat(name); serr == nil && !fi.IsDir() {
				return nil, d.notDir(name)
			}
		}
		return nil, d.fail(err, name)
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = d.notDir(name)
	}
	if err != nil {
		f.Close()
		return nil, d.fail(err, name)
	}
	return f, nil
}

// createTemp creates a new temporary file in the folder dir of d with
// O_CREATE|O_EXCL and returns its name.
func (d Dir) createTemp(dir string) (*os.File, string, error) {
	var b [8]byte
	for range 10 {
		rand.Read(b[:])
		name := path.Join(dir, tempPrefix+hex.EncodeToString(b[:]))
		f, err := d.Root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOCTTY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", d.fail(err, dir)
		}
		return f, name, nil
	}
	return nil, "", errs.New(errs.IO, d.Visible(dir), "Corral could not create a temporary file in %s.", d.Visible(dir))
}

func isTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// RefuseTempName is refuseTempName for callers that create files through
// Stage (a patch's added and moved-to files).
func (d Dir) RefuseTempName(rel string) error {
	return d.refuseTempName(strings.TrimSuffix(rel, "/"))
}

// refuseTempName refuses to create a file or folder named like Corral's
// temporary files: such a name would pass for a leftover of an
// interrupted write. The owner sees them in listings all the same.
func (d Dir) refuseTempName(name string) error {
	for part := range strings.SplitSeq(name, "/") {
		if isTemp(part) {
			v := d.Visible(name)
			return errs.New(errs.InvalidPath, v, "%s: names starting with %q are kept for Corral's own temporary files; choose another name.", v, tempPrefix)
		}
	}
	return nil
}

// resolveLinks returns name with every symlink in it replaced by its
// target, so that a write lands on the file a link points at instead of
// replacing the link. It follows at most MaxSymlinks links and refuses
// absolute targets and targets that climb out of the root. Components that
// do not exist are kept as written. The result is only a name: the
// operations that use it still go through the root, which re-checks every
// component.
func (d Dir) resolveLinks(name string) (string, error) {
	if name == "." {
		return ".", nil
	}
	todo := strings.Split(name, "/")
	var done []string
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", errs.New(errs.Denied, d.Visible(name), "%s leads outside its folder through a link, so Corral will not follow it.", d.Visible(name))
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, c)...)
		fi, err := d.Root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			done = append(done, c)
			continue
		}
		if err != nil {
			return "", d.fail(err, name)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > MaxSymlinks {
			return "", d.fail(syscall.ELOOP, name)
		}
		target, err := d.Root.Readlink(cur)
		if err != nil {
			return "", d.fail(err, name)
		}
		if target == "" || path.IsAbs(target) {
			return "", errs.New(errs.Denied, d.Visible(name), "%s leads outside its folder through a link, so Corral will not follow it.", d.Visible(name))
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}
