// Package versions keeps the content files had before an agent changed
// them, so that the owner can put it back. It is a content-addressed
// store of blobs in a folder of Corral's own data folder: a blob's name is
// the SHA-256 of its content, so identical content is stored once however
// many files and changes share it. What changed which path is not kept
// here but on the audit event of the change (core/audit.Change), which
// names the blobs.
//
// Guarantees:
//
//   - The store lives in the folder Config.Dir, created with mode 0700;
//     every blob is written with mode 0600 to a temporary name in that
//     folder and renamed into place, so a blob is either absent or
//     complete under its name. Nothing here takes a path from an agent:
//     blob names are checked to be 64 lowercase hex digits.
//   - Read checks a blob's content against its name, so a blob damaged
//     on disk is reported (errs.IO), never handed back as a version.
//   - Retention: blobs older than Config.MaxAge and, when the store is
//     over Config.MaxBytes, the oldest blobs first are removed. "Old" is
//     the last time a blob was stored: storing content already there
//     renews it.
//   - No version younger than Config.Keep is removed to make room, so an
//     agent cannot push the version that undoes its own change out of the
//     store by writing more: when a new version would not fit beside the
//     young ones, Put refuses it (ErrFull) and the change does not
//     happen.
//   - A single file over Config.MaxFile is not stored (ErrTooLarge); the
//     caller records the change without its content.
//
// Not guaranteed:
//
//   - Blobs are not synced to disk one by one (that would double the cost
//     of every write); after a power cut the newest versions may be
//     missing, which Read reports as not found or damaged.
//   - The budget is kept by a prune that runs after a store over budget
//     and by the owner's daily prune; between the two the store can be
//     over MaxBytes by what was stored meanwhile.
//   - Nothing here knows which blobs events still name: a pruned version
//     is gone, and restoring it answers not_found.
//   - The folder is protected by its mode and by Corral keeping it away
//     from agents (it is one of the sandbox's private folders and hidden
//     from commands); another program running as the owner can read it.
package versions

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"corral/core/errs"
)

// Defaults of the budget.
const (
	DefaultMaxAge   = 30 * 24 * time.Hour
	DefaultMaxBytes = 5 << 30   // or 10% of the free space, whichever is smaller
	DefaultMaxFile  = 256 << 20 // a larger file is recorded without its content
)

// ErrTooLarge is returned by Put for content over Config.MaxFile.
var ErrTooLarge = errors.New("versions: file over the size limit")

// DefaultKeep is Config.Keep's default.
const DefaultKeep = 7 * 24 * time.Hour

// Config configures a Store.
type Config struct {
	Dir      string        // the store's folder, in Corral's own data folder
	MaxAge   time.Duration // 0: DefaultMaxAge
	MaxBytes int64         // total size of the blobs; 0: the smaller of DefaultMaxBytes and 10% of the free space at Open
	MaxFile  int64         // largest content kept; 0: DefaultMaxFile
	// Keep is how long a version is safe from being removed to make room
	// (MaxAge still ends it); 0: DefaultKeep, at most MaxAge.
	Keep   time.Duration
	Clock  func() time.Time
	Logger *slog.Logger
}

// Store is a content-addressed version store. It is safe for concurrent
// use.
type Store struct {
	dir      string
	blobs    string
	tmp      string
	maxAge   time.Duration
	maxBytes int64
	maxFile  int64
	keep     time.Duration
	now      func() time.Time
	log      *slog.Logger

	pruneMu sync.Mutex // one Prune at a time
	mu      sync.Mutex
	total   int64 // bytes in blobs
	count   int
	oldest  time.Time // the oldest blob's time, as of Open, the last prune or the first Put
	pruning bool
}

// Open opens the store in cfg.Dir, creating it if needed, and measures
// what it holds.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("versions: folder %q is not an absolute path", cfg.Dir)
	}
	s := &Store{
		dir: filepath.Clean(cfg.Dir), maxAge: cfg.MaxAge, maxBytes: cfg.MaxBytes, maxFile: cfg.MaxFile, keep: cfg.Keep,
		now: cfg.Clock, log: cfg.Logger,
	}
	s.blobs, s.tmp = filepath.Join(s.dir, "blobs"), filepath.Join(s.dir, "tmp")
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxAge <= 0 {
		s.maxAge = DefaultMaxAge
	}
	if s.maxFile <= 0 {
		s.maxFile = DefaultMaxFile
	}
	if s.keep <= 0 {
		s.keep = DefaultKeep
	}
	s.keep = min(s.keep, s.maxAge)
	for _, d := range []string{s.dir, s.blobs, s.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("versions: %w", err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return nil, fmt.Errorf("versions: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("versions: %s is not a folder", d)
		}
		if fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(d, 0o700); err != nil {
				return nil, fmt.Errorf("versions: %w", err)
			}
		}
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxBytes
		var st syscall.Statfs_t
		if err := syscall.Statfs(s.dir, &st); err == nil {
			if free := int64(st.Bavail) * int64(st.Bsize) / 10; free < s.maxBytes {
				s.maxBytes = max(free, 64<<20)
			}
		}
	}
	// Temporary files left by a crash are of no use.
	if ents, err := os.ReadDir(s.tmp); err == nil {
		for _, e := range ents {
			os.Remove(filepath.Join(s.tmp, e.Name()))
		}
	}
	for _, b := range s.list() {
		s.total += b.size
		s.count++
		if s.oldest.IsZero() || b.mod.Before(s.oldest) {
			s.oldest = b.mod
		}
	}
	return s, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// MaxFile is the largest content Put keeps.
func (s *Store) MaxFile() int64 { return s.maxFile }

// Usage is what the store holds and may hold.
type Usage struct {
	Bytes    int64
	Blobs    int
	MaxBytes int64
	MaxAge   string
	MaxFile  int64
	// Oldest is when the oldest kept version was stored (zero when none
	// is). It is measured at start and by each prune: a version stored
	// again since is younger than it says, never older.
	Oldest time.Time
}

// Usage reports the store's size and budget.
func (s *Store) Usage() Usage {
	if _, err := os.Stat(s.blobs); errors.Is(err, fs.ErrNotExist) {
		// Removed behind Corral's back: nothing is kept any more, and Put
		// fails (nothing is changed) until Corral starts again.
		s.mu.Lock()
		s.total, s.count, s.oldest = 0, 0, time.Time{}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Usage{Bytes: s.total, Blobs: s.count, MaxBytes: s.maxBytes, MaxAge: s.maxAge.String(), MaxFile: s.maxFile, Oldest: s.oldest}
}

// ValidID reports whether id names a blob: 64 lowercase hex digits.
func ValidID(id string) bool {
	if len(id) != 64 {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *Store) path(id string) string { return filepath.Join(s.blobs, id[:2], id[2:]) }

// Sum returns the name content would have in the store.
func Sum(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

// PutBytes stores content and returns its name.
func (s *Store) PutBytes(content []byte) (string, error) {
	if int64(len(content)) > s.maxFile {
		return "", ErrTooLarge
	}
	id := Sum(content)
	if s.renew(id) {
		return id, nil
	}
	return s.put(bytes.NewReader(content), id)
}

// Put stores what r yields, at most Config.MaxFile bytes (else
// ErrTooLarge, and nothing is stored), and returns its name. Every byte
// read from r is also written to tee when tee is not nil, so a caller can
// hash or compare the content while it is stored.
func (s *Store) Put(r io.Reader, tee io.Writer) (string, error) {
	if tee != nil {
		r = io.TeeReader(r, tee)
	}
	return s.put(r, "")
}

// put writes r to a temporary file, hashing it, and renames it to its
// name; want, when known, is that name.
func (s *Store) put(r io.Reader, want string) (string, error) {
	f, tmp, err := s.createTemp()
	if err != nil {
		return "", err
	}
	defer func() {
		if f != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, s.maxFile+1))
	if err != nil {
		return "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
	}
	if n > s.maxFile {
		return "", ErrTooLarge
	}
	id := hex.EncodeToString(h.Sum(nil))
	if want != "" && id != want {
		return "", errs.New(errs.IO, "", "The content changed while Corral was keeping a version of it.")
	}
	if s.renew(id) {
		return id, nil
	}
	if err := f.Close(); err != nil {
		return "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
	}
	f = nil
	dst := s.path(id)
	if err := os.Mkdir(filepath.Dir(dst), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		os.Remove(tmp)
		return "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
	}
	if err := s.room(n); err != nil {
		os.Remove(tmp)
		return "", err
	}
	now := s.now()
	os.Chtimes(tmp, now, now) // retention counts by the store's clock
	// A link, unlike a rename, does not replace a blob another Put of the
	// same content stored meanwhile, so that blob is counted only once.
	err = os.Link(tmp, dst)
	switch {
	case err == nil:
		os.Remove(tmp)
	case errors.Is(err, fs.ErrExist):
		os.Remove(tmp)
		s.renew(id)
		return id, nil
	default: // a file system without hard links
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
		}
	}
	s.mu.Lock()
	s.total += n
	if s.count == 0 {
		s.oldest = now
	}
	s.count++
	over := s.total > s.maxBytes && !s.pruning
	if over {
		s.pruning = true
	}
	s.mu.Unlock()
	if over {
		go func() {
			s.Prune()
			s.mu.Lock()
			s.pruning = false
			s.mu.Unlock()
		}()
	}
	return id, nil
}

// ErrFull is returned by Put when a new version does not fit beside the
// versions younger than Config.Keep.
var ErrFull = errs.New(errs.Unavailable, "", "Corral's version store is full of recent versions, so it could not keep this file's previous content, and the change did not happen. The owner can raise [versions] max_size_mb, or wait until older versions may go.")

// room makes room for n more bytes, removing old versions if it must, and
// answers ErrFull when only young ones would have to go.
func (s *Store) room(n int64) error {
	s.mu.Lock()
	fits := s.total+n <= s.maxBytes
	s.mu.Unlock()
	if fits {
		return nil
	}
	s.prune(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total+n > s.maxBytes {
		return ErrFull
	}
	return nil
}

// renew reports whether blob id is already stored, and if so marks it as
// stored now, so retention counts from its latest use.
func (s *Store) renew(id string) bool {
	now := s.now()
	return os.Chtimes(s.path(id), now, now) == nil
}

func (s *Store) createTemp() (*os.File, string, error) {
	var b [12]byte
	for range 10 {
		rand.Read(b[:])
		name := filepath.Join(s.tmp, hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
		}
		return f, name, nil
	}
	return nil, "", errs.New(errs.IO, "", "Corral could not keep the previous version of a file.")
}

// Has reports whether blob id is stored.
func (s *Store) Has(id string) bool {
	if !ValidID(id) {
		return false
	}
	_, err := os.Stat(s.path(id))
	return err == nil
}

// Read returns the content of blob id, at most max bytes (else
// too_large), checked against its name.
func (s *Store) Read(id string, max int64) ([]byte, error) {
	if !ValidID(id) {
		return nil, errs.New(errs.InvalidParams, "", "%q is not the name of a version.", id)
	}
	f, err := os.Open(s.path(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errs.New(errs.NotFound, "", "That version is no longer kept (versions are kept for %s, within a budget of %d MiB).", s.maxAge, s.maxBytes>>20)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not read a kept version.")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not read a kept version.")
	}
	if int64(len(data)) > max {
		return nil, errs.New(errs.TooLarge, "", "That version is larger than %d bytes.", max)
	}
	if Sum(data) != id {
		return nil, errs.New(errs.IO, "", "A kept version is damaged on disk, so Corral will not restore it.")
	}
	return data, nil
}

type blob struct {
	path string
	size int64
	mod  time.Time
}

// list returns every blob.
func (s *Store) list() []blob {
	var out []blob
	dirs, _ := os.ReadDir(s.blobs)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(s.blobs, d.Name()))
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out = append(out, blob{filepath.Join(s.blobs, d.Name(), e.Name()), fi.Size(), fi.ModTime()})
		}
	}
	return out
}

// Prune removes the blobs older than MaxAge, then the oldest until the
// store is within MaxBytes, and reports how many it removed and how many
// bytes that freed.
func (s *Store) Prune() (removed int, freed int64) { return s.prune(0) }

// prune is Prune making room for need more bytes besides.
func (s *Store) prune(need int64) (removed int, freed int64) {
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	bs := s.list()
	slices.SortFunc(bs, func(a, b blob) int { return a.mod.Compare(b.mod) })
	var total int64
	for _, b := range bs {
		total += b.size
	}
	now := s.now()
	cutoff, young := now.Add(-s.maxAge), now.Add(-s.keep)
	var oldest time.Time
	for _, b := range bs {
		expired := b.mod.Before(cutoff)
		if !expired && (total+need <= s.maxBytes || !b.mod.Before(young)) {
			oldest = b.mod
			break // within budget, or only young versions are left
		}
		if err := os.Remove(b.path); err != nil {
			if oldest.IsZero() {
				oldest = b.mod
			}
			continue
		}
		total -= b.size
		removed++
		freed += b.size
	}
	s.mu.Lock()
	s.total -= freed
	s.count -= removed
	if s.total < 0 {
		s.total = 0
	}
	if len(bs) > 0 {
		s.oldest = oldest // zero when every blob was removed
		if oldest.IsZero() && s.count > 0 {
			s.oldest = now // stored while this prune ran
		}
	}
	s.mu.Unlock()
	if removed > 0 {
		s.log.Info("versions: pruned", "removed", removed, "bytes", freed)
	}
	return removed, freed
}
