package versions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Writable reports whether new versions can be kept now: nil when the
// store's folders are there and writable, else an error whose message is
// a sentence for the owner (naming no host path). A folder removed while
// Corral runs is made again, so the store heals by itself once what
// removed it is done; the versions it held are gone, and restoring them
// answers not_found. Callers refuse operations that would change files
// while it fails: a change whose old content cannot be kept must not
// happen.
func (s *Store) Writable() error {
	for _, d := range []string{s.dir, s.blobs, s.tmp} {
		err := writable(d)
		if errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("versions: the version store's folder was removed; making it again (the versions it held are lost)", "path", d)
			if err = os.MkdirAll(d, 0o700); err == nil {
				err = writable(d)
			}
			s.lost()
		}
		if err != nil {
			var no syscall.Errno
			why := "it cannot be written"
			if errors.As(err, &no) {
				why += " (" + no.Error() + ")"
			}
			return fmt.Errorf("Corral cannot keep versions of what agents change: its version store %s, so it refuses every agent operation. Corral resumes by itself once it can", why)
		}
	}
	return nil
}

// lost forgets every version and who held it: the store's folders were
// removed behind Corral's back, so usage and shares start again from
// nothing.
func (s *Store) lost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total, s.count, s.oldest = 0, 0, time.Time{}
	s.holders, s.held = map[string]*holder{}, map[string]int{}
	_ = os.MkdirAll(filepath.Join(s.dir, claimsDir), 0o700)
}
