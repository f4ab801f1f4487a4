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
//   - Each agent has its own share of the budget: the versions kept for
//     its changes may take at most Config.AgentShare (a quarter of
//     MaxBytes unless set). When a change would take an agent over its
//     share, that agent's own versions that retention lets go (older
//     than Keep, or than MaxAge) are removed, oldest first; when that is
//     not enough, Put refuses that agent's change (ErrShareFull, which is
//     also ErrFull) with a sentence saying why and what the owner can do.
//     No other agent is refused, and nothing of another agent is removed
//     to make that room.
//   - A version several agents stored counts in full in each one's share
//     and is removed by an agent's prune only when nobody else holds it.
//   - An agent whose versions take less than its floor (an eighth of its
//     share) is never refused because the store as a whole is full (other
//     agents filled it with young versions): the store may then go over
//     MaxBytes by at most that floor per agent.
//   - The owner's own versions (who is Owner: undo, restore) are never
//     refused for space and count in no agent's share; they count in the
//     store's total and may take it over MaxBytes.
//   - Who holds which version is kept beside the blobs, in claims/ (one
//     empty file per agent and version, its time the time the agent last
//     stored it), so the shares survive a restart. Usage reports each
//     holder's part.
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
//   - The share is fixed, not the budget divided among the agents at
//     work: an agent is never refused because another one started, but
//     four agents with full shares fill the store, and then an agent over
//     its floor is refused until versions age past Keep.
//   - Shares are checked as versions are stored: two changes of one agent
//     at the same instant can take it over its share by one version.
//   - Nothing here knows which blobs events still name: a pruned version
//     is gone, and restoring it answers not_found.
//   - The folder is protected by its mode and by Corral keeping it away
//     from agents (it is one of the sandbox's private folders and hidden
//     from commands); another program running as the owner can read it.
package versions

import (
	"bytes"
	"cmp"
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
	"strings"
	"sync"
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

// DefaultAgentParts: by default an agent's share is MaxBytes divided by
// this.
const DefaultAgentParts = 4

// Config configures a Store.
type Config struct {
	Dir      string        // the store's folder, in Corral's own data folder
	MaxAge   time.Duration // 0: DefaultMaxAge
	MaxBytes int64         // total size of the blobs; 0: the smaller of DefaultMaxBytes and 10% of the free space at Open
	MaxFile  int64         // largest content kept; 0: DefaultMaxFile
	// Keep is how long a version is safe from being removed to make room
	// (MaxAge still ends it); 0: DefaultKeep, at most MaxAge.
	Keep time.Duration
	// AgentShare is the most one agent's versions may take; 0: MaxBytes
	// divided by DefaultAgentParts. At most MaxBytes.
	AgentShare int64
	Clock      func() time.Time
	Logger     *slog.Logger
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
	share    int64 // an agent's share
	floor    int64 // under it, an agent is not refused for the store's total
	now      func() time.Time
	log      *slog.Logger

	pruneMu sync.Mutex // one Prune at a time
	// mu guards the counts and the holders; a blob is put in place and
	// claimed, or unclaimed and removed, under it, so a blob being stored
	// is never removed between the two.
	mu      sync.Mutex
	total   int64 // bytes in blobs
	count   int
	oldest  time.Time // the oldest blob's time, as of Open, the last prune or the first Put
	pruning bool
	holders map[string]*holder // by who
	held    map[string]int     // blob name → how many holders claim it
}

// Open opens the store in cfg.Dir, creating it if needed, and measures
// what it holds.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("versions: folder %q is not an absolute path", cfg.Dir)
	}
	s := &Store{
		dir: filepath.Clean(cfg.Dir), maxAge: cfg.MaxAge, maxBytes: cfg.MaxBytes, maxFile: cfg.MaxFile, keep: cfg.Keep,
		now: cfg.Clock, log: cfg.Logger, holders: map[string]*holder{}, held: map[string]int{},
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
	for _, d := range []string{s.dir, s.blobs, s.tmp, filepath.Join(s.dir, claimsDir)} {
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
		if avail, ok := freeBytes(s.dir); ok {
			if free := avail / 10; free < s.maxBytes {
				s.maxBytes = max(free, 64<<20)
			}
		}
	}
	s.share = cfg.AgentShare
	if s.share <= 0 {
		s.share = s.maxBytes / DefaultAgentParts
	}
	s.share = min(s.share, s.maxBytes)
	s.floor = s.share / 8
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
	s.loadClaims()
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
	// AgentShare is the most one agent's versions may take.
	AgentShare int64
	// Agents is what each holder's versions take, the largest first; the
	// owner's own (undo, restore) are under the client "owner".
	Agents []AgentUsage
}

// AgentUsage is what the versions kept for one agent's changes take.
type AgentUsage struct {
	Client string
	Bytes  int64 // a version several agents hold counts in each one's
	Blobs  int
	// Oldest is when the oldest of them was stored (zero when none is).
	Oldest time.Time
	// Refused counts this agent's changes refused since Corral started
	// because its share was full.
	Refused int64
}

// Usage reports the store's size and budget.
func (s *Store) Usage() Usage {
	if _, err := os.Stat(s.blobs); errors.Is(err, fs.ErrNotExist) {
		// Removed behind Corral's back: nothing is kept any more (Writable
		// makes the folders again before the next change).
		s.lost()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Usage{Bytes: s.total, Blobs: s.count, MaxBytes: s.maxBytes, MaxAge: s.maxAge.String(), MaxFile: s.maxFile, Oldest: s.oldest,
		AgentShare: s.share, Agents: []AgentUsage{}}
	for _, h := range s.holders {
		if len(h.blobs) == 0 && h.refused == 0 {
			continue
		}
		u.Agents = append(u.Agents, AgentUsage{Client: h.client(), Bytes: h.bytes, Blobs: len(h.blobs), Oldest: h.oldest(), Refused: h.refused})
	}
	slices.SortFunc(u.Agents, func(a, b AgentUsage) int {
		if a.Bytes != b.Bytes {
			return cmp.Compare(b.Bytes, a.Bytes)
		}
		return strings.Compare(a.Client, b.Client)
	})
	return u
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

// Owner is who the owner's own versions are stored for (undo, restore):
// no agent's share limits them.
const Owner = ""

// PutBytes stores content for who (an agent's client name, or Owner) and
// returns its name.
func (s *Store) PutBytes(who string, content []byte) (string, error) {
	if int64(len(content)) > s.maxFile {
		return "", ErrTooLarge
	}
	id := Sum(content)
	switch err := s.hold(who, id, int64(len(content)), ""); {
	case err == nil:
		return id, nil
	case !errors.Is(err, errGone):
		return "", err
	}
	return s.put(who, bytes.NewReader(content), id)
}

// Put stores what r yields for who (an agent's client name, or Owner), at
// most Config.MaxFile bytes (else ErrTooLarge, and nothing is stored),
// and returns its name. Every byte read from r is also written to tee
// when tee is not nil, so a caller can hash or compare the content while
// it is stored.
func (s *Store) Put(who string, r io.Reader, tee io.Writer) (string, error) {
	if tee != nil {
		r = io.TeeReader(r, tee)
	}
	return s.put(who, r, "")
}

// put writes r to a temporary file, hashing it, and keeps it under its
// name for who; want, when known, is that name.
func (s *Store) put(who string, r io.Reader, want string) (string, error) {
	f, tmp, err := s.createTemp()
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // linked into place, or of no use
	defer func() {
		if f != nil {
			f.Close()
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
	err = f.Close()
	f = nil
	if err != nil {
		return "", errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
	}
	if err := s.hold(who, id, n, tmp); err != nil {
		return "", err
	}
	return id, nil
}

// errGone: hold was asked to hold a blob the store does not have.
var errGone = errors.New("versions: not stored")

// ErrFull is returned by Put when a new version does not fit beside the
// versions younger than Config.Keep.
var ErrFull = errs.New(errs.Unavailable, "", "Corral's version store is full of recent versions, so it could not keep this file's previous content, and the change did not happen. The owner can raise [versions] max_size_mb, or wait until older versions may go.")

// ErrShareFull is the cause of Put's refusal when an agent's own share is
// full of versions younger than Config.Keep; the error Put returns is an
// *errs.Error with a sentence for the agent, and errors.Is finds both
// ErrShareFull and ErrFull in it.
var ErrShareFull = fmt.Errorf("versions: the agent's share is full: %w", ErrFull)

// hold makes blob id (n bytes) stored and held by who: it checks who's
// share, then, for a blob the store does not have, its budget, and puts
// tmp (a complete temporary file of the content) in place. With tmp ""
// and the blob not stored, it answers errGone.
func (s *Store) hold(who, id string, n int64, tmp string) error {
	s.mu.Lock()
	h := s.holder(who)
	_, had := h.blobs[id]
	if !had && who != Owner {
		if h.bytes+h.reserved+n > s.share {
			s.pruneHolder(h, h.bytes+h.reserved+n-s.share)
		}
		if h.bytes+h.reserved+n > s.share {
			h.refused++
			err := s.shareFull(h, n)
			s.mu.Unlock()
			return err
		}
	}
	if !had {
		h.reserved += n // until it is claimed or refused
	}
	s.mu.Unlock()
	var err error
	if tmp != "" && !s.Has(id) {
		err = s.room(h, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !had {
		h.reserved -= n
	}
	if err != nil {
		return err
	}
	now := s.now()
	if !s.renew(id, now) {
		if tmp == "" {
			return errGone
		}
		if err := s.place(id, tmp, n, now); err != nil {
			return err
		}
	}
	s.claim(h, id, n, now)
	return nil
}

// place links the temporary file tmp to blob id's name and counts it;
// s.mu is held.
func (s *Store) place(id, tmp string, n int64, now time.Time) error {
	dst := s.path(id)
	if err := os.Mkdir(filepath.Dir(dst), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
	}
	os.Chtimes(tmp, now, now) // retention counts by the store's clock
	// A link, unlike a rename, leaves the temporary name for put to
	// remove; without hard links, a rename.
	if err := os.Link(tmp, dst); err != nil {
		if err := os.Rename(tmp, dst); err != nil {
			return errs.Wrap(err, errs.IO, "", "Corral could not keep the previous version of a file.")
		}
	}
	s.total += n
	if s.count == 0 {
		s.oldest = now
	}
	s.count++
	if s.total > s.maxBytes && !s.pruning {
		s.pruning = true
		go func() {
			s.Prune()
			s.mu.Lock()
			s.pruning = false
			s.mu.Unlock()
		}()
	}
	return nil
}

// room makes room in the store for n more bytes for h, removing old
// versions if it must, and answers ErrFull when only young ones would
// have to go — unless h is the owner, or an agent under its floor.
func (s *Store) room(h *holder, n int64) error {
	s.mu.Lock()
	fits := s.total+n <= s.maxBytes
	s.mu.Unlock()
	if fits {
		return nil
	}
	s.prune(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total+n <= s.maxBytes || h.who == Owner || h.bytes+h.reserved <= s.floor {
		return nil
	}
	return ErrFull
}

// renew reports whether blob id is already stored, and if so marks it as
// stored now, so retention counts from its latest use.
func (s *Store) renew(id string, now time.Time) bool {
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
		if !s.drop(b) {
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
	// A holder's claim past MaxAge ends, though another holder's newer
	// claim keeps the blob.
	for _, h := range s.holders {
		for len(h.queue) > 0 && h.queue[0].mod.Before(cutoff) {
			e := h.queue[0]
			h.queue = h.queue[1:]
			if c, ok := h.blobs[e.id]; ok && c.mod.Equal(e.mod) {
				if gone, size := s.unclaim(h, e.id); gone {
					removed++
					freed += size
				}
			}
		}
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

// drop removes blob b and every claim on it, unless it was stored again
// since it was listed; it reports whether it removed it.
func (s *Store) drop(b blob) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi, err := os.Lstat(b.path); err != nil || !fi.ModTime().Equal(b.mod) {
		return false
	}
	if err := os.Remove(b.path); err != nil {
		return false
	}
	s.total -= b.size
	s.count--
	if s.total < 0 {
		s.total = 0
	}
	id := filepath.Base(filepath.Dir(b.path)) + filepath.Base(b.path)
	if s.held[id] > 0 {
		for _, h := range s.holders {
			if _, ok := h.blobs[id]; ok {
				s.forget(h, id)
			}
		}
		delete(s.held, id)
	}
	return true
}
