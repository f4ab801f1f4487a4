package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"strings"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/versions"
)

// Versions: before file.write, file.edit, file.delete, file.move and
// file.apply_patch (core/applypatch, through Op.Keep) change anything, the content that was there is kept
// in the version store (core/versions) and the change is recorded on the
// operation's event (audit.Change). Nothing is recorded when the sandbox
// has no version store.

// Reasons a version was not kept (audit.Change.NotKept).
const (
	notKeptTooLarge   = "too_large"
	notKeptHardLinked = "hard_linked"
	notKeptSpecial    = "not_regular"
	// NotKeptTooMany: a folder a command deleted held too many entries
	// (core/commands).
	NotKeptTooMany = "too_many"
)

// prior is what was at one path before a change.
type prior struct {
	vis     string // agent-visible path
	rel     string // path in its Dir
	dir     bool
	link    string // a symlink's target
	size    int64
	mode    uint32
	version string // blob name, "" when not kept
	notKept string
	sum     hash.Hash // with wantSum: the content, for an append's after-hash
}

// keeping reports whether changes are recorded.
func (s *Sandbox) keeping() bool { return s.versions != nil }

// priors keeps the content at rel of d (a file, or with a folder
// everything below it) and describes it, in who's share of the version
// store (an agent's client name, versions.Owner for the owner). follow
// follows a symlink at rel (as a write does). An error means a version
// could not be kept; the change must then not happen.
func (s *Sandbox) priors(who string, d fsbox.Dir, rel string, follow, wantSum bool) ([]prior, error) {
	if !s.keeping() {
		return nil, nil
	}
	var out []prior
	truncated, err := d.Prior(rel, follow, func(e fsbox.PriorEntry) error {
		p := prior{vis: d.Visible(e.Rel), rel: e.Rel, mode: uint32(e.Info.Mode().Perm()), size: e.Info.Size()}
		switch {
		case e.Info.IsDir():
			p.dir, p.size = true, 0
		case e.Info.Mode()&fs.ModeSymlink != 0:
			p.link = e.Link
		case e.File != nil:
			var tee io.Writer // nil unless wantSum: a nil hash.Hash would not be a nil io.Writer
			if wantSum {
				p.sum = sha256.New()
				tee = p.sum
			}
			var err error
			p.version, err = s.versions.Put(who, e.File, tee)
			switch {
			case errors.Is(err, versions.ErrTooLarge):
				p.notKept, p.sum = notKeptTooLarge, nil
			case errors.Is(err, versions.ErrFull):
				return err
			case err != nil:
				return errs.Wrap(err, errs.IO, p.vis, "Corral could not keep the previous version of %s, so it did not change it.", p.vis)
			}
		case e.Info.Mode().IsRegular():
			p.notKept = notKeptHardLinked
		default:
			p.notKept = notKeptSpecial
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if truncated {
		return nil, errs.New(errs.TooLarge, d.Visible(rel), "%s holds more than %d files and folders, too many for Corral to keep versions of; change it in smaller parts.", d.Visible(rel), fsbox.MaxWalkEntries)
	}
	return out, nil
}

func sumHex(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// removed turns what a deletion took away into changes (Removed).
func removed(ps []prior) []audit.Change { return Removed(exported(ps)) }

// moved turns what a move took from fromVis to toVis into changes.
func moved(ps []prior, fromVis, toVis string) []audit.Change {
	var out []audit.Change
	for _, p := range ps {
		if p.dir {
			continue
		}
		to := toVis + strings.TrimPrefix(p.vis, fromVis)
		out = append(out, audit.Change{Path: to, From: p.vis, Kind: audit.Moved, SizeBefore: p.size, SizeAfter: p.size,
			Version: p.version, After: p.version, Mode: p.mode, Link: p.link, NotKept: p.notKept})
	}
	return out
}

// written is the change a write of after (the whole new content) made at
// vis, given what was there.
func written(ps []prior, vis string, after []byte) []audit.Change {
	c := audit.Change{Path: vis, Kind: audit.Created, SizeAfter: int64(len(after)), After: versions.Sum(after), Mode: 0o644}
	if len(ps) == 1 && !ps[0].dir {
		p := ps[0]
		c.Path, c.Kind, c.SizeBefore, c.Version, c.Mode, c.Link, c.NotKept = p.vis, audit.Modified, p.size, p.version, p.mode, p.link, p.notKept
	}
	return []audit.Change{c}
}

// appended is the change an append of data made at vis.
func appended(ps []prior, vis string, data []byte) []audit.Change {
	if len(ps) != 1 || ps[0].dir || ps[0].sum == nil {
		if len(ps) == 0 {
			return written(nil, vis, data)
		}
		p := ps[0]
		return []audit.Change{{Path: p.vis, Kind: audit.Modified, SizeBefore: p.size, SizeAfter: p.size + int64(len(data)), Version: p.version, Mode: p.mode, NotKept: p.notKept}}
	}
	p := ps[0]
	p.sum.Write(data)
	return []audit.Change{{Path: p.vis, Kind: audit.Modified, SizeBefore: p.size, SizeAfter: p.size + int64(len(data)), Version: p.version, After: sumHex(p.sum), Mode: p.mode}}
}
