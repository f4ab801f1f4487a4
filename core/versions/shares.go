package versions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"corral/core/errs"
)

// Shares: who holds which version, so that each agent's versions are
// counted against its own share (see the package doc). A holder's claims
// are in claims/<key>/ (key: the SHA-256 of the client name, cut to 32
// hex digits; "owner" for Owner; the name itself in claims/<key>/client),
// one empty file per blob, named as the blob is, whose time is when the
// holder last stored it.

const (
	claimsDir  = "claims"
	clientFile = "client"
	ownerKey   = "owner"
)

// holder is one agent's (or the owner's) part of the store. Its fields
// are guarded by Store.mu.
type holder struct {
	who      string
	dir      string
	blobs    map[string]claimed
	bytes    int64
	reserved int64 // being stored now
	// queue is its claims oldest first; an entry whose time is no longer
	// the claim's (stored again since, or dropped) is skipped.
	queue   []queued
	refused int64
}

type claimed struct {
	size int64
	mod  time.Time
}

type queued struct {
	id  string
	mod time.Time
}

func (h *holder) client() string {
	if h.who == Owner {
		return "owner"
	}
	return h.who
}

// oldest is when h's oldest version was stored (zero: none).
func (h *holder) oldest() time.Time {
	for len(h.queue) > 0 {
		e := h.queue[0]
		if c, ok := h.blobs[e.id]; ok && c.mod.Equal(e.mod) {
			return e.mod
		}
		h.queue = h.queue[1:]
	}
	return time.Time{}
}

func holderKey(who string) string {
	if who == Owner {
		return ownerKey
	}
	sum := sha256.Sum256([]byte(who))
	return hex.EncodeToString(sum[:16])
}

// holder returns who's holder, making it on first use; s.mu is held.
func (s *Store) holder(who string) *holder {
	if h, ok := s.holders[who]; ok {
		return h
	}
	h := &holder{who: who, dir: filepath.Join(s.dir, claimsDir, holderKey(who)), blobs: map[string]claimed{}}
	s.holders[who] = h
	if err := os.Mkdir(h.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		s.log.Warn("versions: cannot record who holds versions", "client", h.client(), "err", err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, clientFile), []byte(who), 0o600); err != nil {
		s.log.Warn("versions: cannot record who holds versions", "client", h.client(), "err", err)
	}
	return h
}

func (h *holder) claimPath(id string) string { return filepath.Join(h.dir, id[:2], id[2:]) }

// claim records that h holds blob id (n bytes), stored now; s.mu is
// held. A claim that cannot be written to disk is still counted until
// Corral stops.
func (s *Store) claim(h *holder, id string, n int64, now time.Time) {
	p := h.claimPath(id)
	if os.Chtimes(p, now, now) != nil {
		err := os.Mkdir(filepath.Dir(p), 0o700)
		if err == nil || errors.Is(err, fs.ErrExist) {
			var f *os.File
			if f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
				f.Close()
				err = os.Chtimes(p, now, now)
			}
		}
		if err != nil {
			s.log.Warn("versions: cannot record who holds a version", "client", h.client(), "err", err)
		}
	}
	if _, ok := h.blobs[id]; !ok {
		h.bytes += n
		s.held[id]++
	}
	h.blobs[id] = claimed{size: n, mod: now}
	h.queue = append(h.queue, queued{id, now})
	if len(h.queue) > 2*len(h.blobs)+64 {
		h.rebuild()
	}
}

// rebuild orders h's queue anew from its claims.
func (h *holder) rebuild() {
	h.queue = h.queue[:0]
	for id, c := range h.blobs {
		h.queue = append(h.queue, queued{id, c.mod})
	}
	slices.SortFunc(h.queue, func(a, b queued) int { return a.mod.Compare(b.mod) })
}

// forget drops h's claim on id; s.mu is held.
func (s *Store) forget(h *holder, id string) {
	c, ok := h.blobs[id]
	if !ok {
		return
	}
	os.Remove(h.claimPath(id))
	delete(h.blobs, id)
	h.bytes -= c.size
	if s.held[id]--; s.held[id] <= 0 {
		delete(s.held, id)
	}
}

// unclaim drops h's claim on id and removes the blob when nobody else
// holds it; it reports whether it removed it, and its size. s.mu is held.
func (s *Store) unclaim(h *holder, id string) (bool, int64) {
	c, ok := h.blobs[id]
	if !ok {
		return false, 0
	}
	s.forget(h, id)
	if s.held[id] > 0 {
		return false, 0
	}
	if err := os.Remove(s.path(id)); err != nil {
		return false, 0
	}
	s.total = max(0, s.total-c.size)
	s.count = max(0, s.count-1)
	return true, c.size
}

// pruneHolder removes h's own versions that retention lets go, oldest
// first, until need bytes of its share are free or only young ones are
// left; s.mu is held.
func (s *Store) pruneHolder(h *holder, need int64) {
	young := s.now().Add(-s.keep)
	var freed int64
	removed := 0
	for len(h.queue) > 0 && freed < need {
		e := h.queue[0]
		c, ok := h.blobs[e.id]
		if !ok || !c.mod.Equal(e.mod) {
			h.queue = h.queue[1:]
			continue
		}
		if !e.mod.Before(young) {
			break
		}
		h.queue = h.queue[1:]
		s.unclaim(h, e.id)
		freed += c.size
		removed++
	}
	if removed > 0 {
		s.log.Info("versions: pruned an agent's share", "client", h.client(), "removed", removed, "bytes", freed)
	}
}

// shareFull is the refusal of a version of n bytes for h, whose share
// is full of young versions.
func (s *Store) shareFull(h *holder, n int64) error {
	owner := fmt.Sprintf("Other agents are not affected. The owner can raise [versions] max_size_mb in Corral's config.toml (each agent's share is %s of it) or shorten [versions] retention, and restart Corral; or let go of your versions in the dashboard's What changed.", s.shareWords())
	if n > s.share {
		return errs.Wrap(ErrShareFull, errs.Unavailable, "",
			"This file's previous content (%s) is larger than your whole share of Corral's version store (%s), so Corral cannot keep it for the owner's undo, and this change did not happen. %s",
			size(n), size(s.share), owner)
	}
	when := ""
	if o := h.oldest(); !o.IsZero() {
		when = fmt.Sprintf(" Otherwise your oldest version may go from %s.", o.Add(s.keep).UTC().Format("2006-01-02 15:04 UTC"))
	}
	return errs.Wrap(ErrShareFull, errs.Unavailable, "",
		"Your share of Corral's version store is full, so this change did not happen. Corral keeps the previous content of every file an agent changes so the owner can undo it; the versions of your changes take %s of your %s, and versions younger than %s are not removed to make room. %s%s",
		size(h.bytes+h.reserved), size(s.share), duration(s.keep), owner, when)
}

func (s *Store) shareWords() string {
	if s.share == s.maxBytes/DefaultAgentParts {
		return "a quarter"
	}
	return "a part"
}

// size is n bytes for a person.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// duration is d for a person: whole days or hours when it is.
func duration(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		if d == 24*time.Hour {
			return "a day"
		}
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "an hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}

// loadClaims reads claims/ at Open: each holder's claims on blobs that
// are still stored (a claim on a removed blob is removed).
func (s *Store) loadClaims() {
	root := filepath.Join(s.dir, claimsDir)
	dirs, _ := os.ReadDir(root)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		name, err := os.ReadFile(filepath.Join(dir, clientFile))
		who := string(name)
		if err != nil || holderKey(who) != d.Name() {
			s.log.Warn("versions: a holder's folder is not readable; its versions count in no agent's share", "path", dir)
			continue
		}
		h := &holder{who: who, dir: dir, blobs: map[string]claimed{}}
		s.holders[who] = h
		subs, _ := os.ReadDir(dir)
		for _, sub := range subs {
			if !sub.IsDir() || len(sub.Name()) != 2 {
				continue
			}
			ents, _ := os.ReadDir(filepath.Join(dir, sub.Name()))
			for _, e := range ents {
				id := sub.Name() + e.Name()
				if !ValidID(id) {
					continue
				}
				fi, err := os.Stat(s.path(id))
				if err != nil {
					os.Remove(h.claimPath(id))
					continue
				}
				ci, err := e.Info()
				if err != nil {
					continue
				}
				h.blobs[id] = claimed{size: fi.Size(), mod: ci.ModTime()}
				h.bytes += fi.Size()
				s.held[id]++
			}
		}
		h.rebuild()
	}
}

// Forget drops who's claims on the versions it stored before before
// (zero: all of them), removing those nobody else holds, and reports how
// many versions it let go and how many bytes of who's share that freed.
// The changes those versions would undo can no longer be undone.
func (s *Store) Forget(who string, before time.Time) (versions int, freed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holders[who]
	if !ok {
		return 0, 0
	}
	for id, c := range h.blobs {
		if !before.IsZero() && !c.mod.Before(before) {
			continue
		}
		s.unclaim(h, id)
		versions++
		freed += c.size
	}
	if versions > 0 {
		h.rebuild()
		s.log.Info("versions: forgotten by the owner", "client", h.client(), "versions", versions, "bytes", freed)
	}
	return versions, freed
}
