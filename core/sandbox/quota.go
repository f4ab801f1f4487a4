package sandbox

import (
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"corral/core/errs"
)

// Per-folder disk quotas. Each scope folder and the shared folder may hold
// at most Config.Quota bytes (counted in allocated blocks, so sparse files
// count what they use). A folder at or over its quota accepts no more
// writes from file tools (moves into it included) and starts no more
// commands in that scope; reading, listing and deleting still work, so an
// agent can make room. Not guaranteed: a single write or a running command can
// push a folder past its quota (by at most the largest file a command may
// write, RLIMIT_FSIZE); the next one is refused.

// usageTTL is how long a folder's measured size is trusted; writes through
// Corral add to it meanwhile, and a command's end makes it stale at once.
const usageTTL = 10 * time.Second

type usage struct {
	mu    sync.Mutex
	byDir map[string]*folderUsage
	stale uint64 // counts stale calls: a measurement begun before one is not kept
	// measure is folderSize, or a test's stand-in.
	measure func(dir string) int64
}

type folderUsage struct {
	bytes     int64
	at        time.Time
	measuring bool // a measurement is under way; bytes is used meanwhile
}

// used returns the size of dir, measuring it again when the last
// measurement is older than usageTTL or was made stale. The folder is
// walked without holding the lock, so a large folder being measured does
// not hold up writes elsewhere; while it is measured again, its last size
// is used.
func (s *Sandbox) used(dir string) int64 {
	u := &s.usage
	now := s.now()
	u.mu.Lock()
	if u.byDir == nil {
		u.byDir = map[string]*folderUsage{}
	}
	f := u.byDir[dir]
	if f != nil && (f.measuring || now.Sub(f.at) <= usageTTL) {
		n := f.bytes
		u.mu.Unlock()
		return n
	}
	if f != nil {
		f.measuring = true
	}
	gen := u.stale
	measure := u.measure
	u.mu.Unlock()
	if measure == nil {
		measure = folderSize
	}
	n := measure(dir)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stale == gen {
		u.byDir[dir] = &folderUsage{bytes: n, at: now}
	} else if f != nil {
		f.measuring = false
	}
	return n
}

// grew adds n bytes written through Corral to dir's measured size.
func (s *Sandbox) grew(dir string, n int64) {
	u := &s.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if f := u.byDir[dir]; f != nil {
		f.bytes += n
	}
}

// stale makes dir be measured again next time (a command wrote in it).
func (s *Sandbox) stale(dir string) {
	u := &s.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byDir, dir)
	u.stale++
}

// checkQuota refuses a write in dir (a scope or the shared folder, named
// what for the agent) when it is at or over its quota.
func (s *Sandbox) checkQuota(dir, what string) error {
	if s.quota <= 0 {
		return nil
	}
	if n := s.used(dir); n >= s.quota {
		return errs.New(errs.TooLarge, "", "%s has reached its quota of %s (%s used), so Corral refused to write more. Delete or move something out first, or ask the owner to raise [sandbox] quota_mb.", what, mib(s.quota), mib(n))
	}
	return nil
}

// folderSize adds up the blocks allocated to the files below dir, without
// following symbolic links.
func folderSize(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts count as empty
		}
		if info, err := d.Info(); err == nil {
			total += allocated(info)
		}
		return nil
	})
	return total
}

func mib(n int64) string {
	return formatMiB(float64(n) / (1 << 20))
}
