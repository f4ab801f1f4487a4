package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"corral/core/audit"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/store"
	"corral/ui/undowin"
)

// trayOwner is the tray acting with the owner's rights: its undos are
// events of client "tray", decided by the owner.
var trayOwner = sandbox.Caller{Client: "tray", Owner: true}

var _ undowin.Undoer = trayControl{}

// trayUndo is "Undo last change by …" of the tray's Recent activity:
// undo.preview and undo.apply of an agent's newest change, as the
// dashboard calls them.
type trayUndo struct {
	store *store.Store
	box   *undo.Service
}

func (c trayControl) LastChange(ctx context.Context, client string) (undowin.LastChange, error) {
	return trayUndo{c.d.Store, c.d.Undo}.LastChange(ctx, client)
}

func (c trayControl) Undo(ctx context.Context, id int64) (string, error) {
	return trayUndo{c.d.Store, c.d.Undo}.Undo(ctx, id)
}

// undoWords say what a change was and what undoing it does.
var undoWords = map[string]string{
	"restore":   "undoing puts its earlier content back",
	"remove":    "undoing removes it",
	"move_back": "undoing moves it back",
	"none":      "it is already as it was",
}

var changeWords = map[string]string{"created": "created", "modified": "changed", "deleted": "deleted", "moved": "moved"}

// LastChange previews undoing the newest allowed event of client that
// changed files (not an undo or restore).
func (u trayUndo) LastChange(ctx context.Context, client string) (undowin.LastChange, error) {
	p, err := u.store.Query(ctx, audit.Filter{Client: client, Changed: true, Decision: audit.Allow, Limit: 100})
	if err != nil {
		return undowin.LastChange{}, errors.New("Corral could not read its audit log.")
	}
	for _, ev := range p.Events {
		if strings.HasPrefix(ev.Op, "undo.") || ev.Op == "version.restore" {
			continue
		}
		r, err := u.box.UndoPreview(ctx, trayOwner, undo.UndoArgs{EventID: ev.ID})
		if err != nil {
			return undowin.LastChange{}, err
		}
		lc := undowin.LastChange{EventID: ev.ID, Client: ev.Client, Op: ev.Op, Time: ev.Time}
		for _, f := range r.Files {
			what := changeWords[f.Kind]
			if what == "" {
				what = f.Kind
			}
			if f.From != "" {
				what += " from " + f.From
			}
			lc.Files = append(lc.Files, undowin.ChangedFile{Path: f.Path, What: what + "; " + undoWords[f.Action], Conflict: f.Conflict})
		}
		return lc, nil
	}
	return undowin.LastChange{}, fmt.Errorf("%s has changed no files lately that Corral could undo.", client)
}

// Undo undoes one event; a conflict undoes nothing and says so.
func (u trayUndo) Undo(ctx context.Context, id int64) (string, error) {
	r, err := u.box.UndoApply(ctx, trayOwner, undo.UndoArgs{EventID: id})
	if err != nil {
		return "", err
	}
	n := 0
	for _, f := range r.Files {
		if f.Action != "none" && f.Conflict == "" {
			n++
		}
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("Undone: %d file%s put back. The undo is event %d in the activity, and can itself be undone from the dashboard.", n, s, r.UndoEvent), nil
}
