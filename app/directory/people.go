package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/store"
)

// People the owner manages at runtime (docs/owner.md "Agents and people"): each
// has a folder under the sandbox base, which outlives them.

// personKeeper is what the people methods write to the store.
type personKeeper interface {
	AddPerson(ctx context.Context, p store.Person) error
	RenamePerson(ctx context.Context, id, name string) (bool, error)
	RemovePerson(ctx context.Context, id string) (bool, error)
}

// personFolders is what the people methods use of the sandbox: each
// person's folder, made when they are added and kept when they go.
type personFolders interface {
	AddUser(id string) (folder string, err error)
	RemoveUser(id string) (folder string)
	Layout() paths.Layout
}

// personArea answers person.list, add, rename and remove. Like the agent
// methods, a change is written to the store first and to the live
// directory after, under the directory's lock.
type personArea struct {
	dir     *directory
	keep    personKeeper // nil without a database: nothing can change
	folders personFolders
	cfgFile string // config.toml, named when a change belongs there
	now     func() time.Time
	record  recordFunc
}

func (s *Server) personArea() personArea {
	return personArea{dir: s.dir, keep: s.agents, folders: s.box, cfgFile: s.cfg.Path, now: s.now, record: s.record}
}

func (x personArea) methods(add func(name string, m method)) {
	add("person.list", method{owner: true, fn: x.list})
	add("person.add", method{owner: true, fn: x.add})
	add("person.rename", method{owner: true, fn: x.rename})
	add("person.remove", method{owner: true, fn: x.remove})
}

type personInfo struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	FromConfig bool     `json:"from_config"`
	Folder     string   `json:"folder"` // the host folder (the owner's view)
	Agents     []string `json:"agents"` // agents working in this folder
}

// folderOf is the person's folder on this computer ("" if it has none).
func (x personArea) folderOf(id string) string {
	l := x.folders.Layout()
	if t, err := l.Resolve(id, "."); err == nil {
		return t.Dir
	}
	return ""
}

func (x personArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	x.dir.mu.RLock()
	out := make([]personInfo, 0, len(x.dir.people))
	for _, p := range x.dir.people {
		pi := personInfo{ID: p.ID, Name: p.Name, FromConfig: p.fromConfig, Folder: x.folderOf(p.ID), Agents: []string{}}
		for _, a := range x.dir.agents {
			if a.User == p.ID {
				pi.Agents = append(pi.Agents, a.Name)
			}
		}
		sort.Strings(pi.Agents)
		out = append(out, pi)
	}
	x.dir.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return peopleResult{People: out, Managed: x.keep != nil}, nil
}

type personParams struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
}

// personIDFrom makes a folder name of a person's name: "Ana María" → "ana-mar-a".
func personIDFrom(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

// personName is a person's name as given, trimmed, if it is one.
func personName(given string) (string, error) {
	name := strings.TrimSpace(given)
	if name == "" || len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Cf) }) {
		return "", errs.New(errs.InvalidParams, "", "A person's name is 1 to 100 characters, without control or invisible characters.")
	}
	return name, nil
}

func (x personArea) add(ctx context.Context, c *call) (any, error) {
	var p personParams
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	var err error
	if p.Name, err = personName(p.Name); err != nil {
		return nil, err
	}
	if p.ID == "" {
		p.ID = personIDFrom(p.Name)
	}
	shared := x.folders.Layout().SharedDir
	if !paths.SafeSegment(p.ID) || paths.ASCIIEqualFold(p.ID, shared) || p.ID == sandbox.ScopeCompanion || p.ID == sandbox.ScopeDefault {
		return nil, errs.New(errs.InvalidParams, "", "%q cannot be a folder name for a person: use 1 to 64 letters, digits, '_' or '-', other than %q, \"companion\" and \"default\".", p.ID, shared)
	}
	x.dir.mu.Lock()
	if _, ok := x.dir.people[p.ID]; ok {
		x.dir.mu.Unlock()
		return nil, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
	}
	person := store.Person{ID: p.ID, Name: p.Name, Created: x.now().UTC()}
	if err := x.keep.AddPerson(ctx, person); err != nil {
		x.dir.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return nil, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the new person.")
	}
	folder, err := x.folders.AddUser(p.ID)
	if err != nil {
		x.keep.RemovePerson(context.WithoutCancel(ctx), p.ID)
		x.dir.mu.Unlock()
		return nil, err
	}
	x.dir.people[p.ID] = &livePerson{Person: person}
	x.dir.mu.Unlock()
	if err := x.record(ctx, c.caller.Client, "person.add", p.ID, p.Name+"; folder "+folder); err != nil {
		return nil, err
	}
	return personResult{Person: personInfo{ID: p.ID, Name: p.Name, Folder: folder, Agents: []string{}}}, nil
}

func (x personArea) rename(ctx context.Context, c *call) (any, error) {
	var p struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	var err error
	if p.Name, err = personName(p.Name); err != nil {
		return nil, err
	}
	x.dir.mu.Lock()
	lp, err := x.runtimePerson(p.ID)
	if err == nil {
		if _, err = x.keep.RenamePerson(ctx, p.ID, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the name.")
		} else {
			lp.Name = p.Name
		}
	}
	x.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := x.record(ctx, c.caller.Client, "person.rename", p.ID, "now called "+p.Name); err != nil {
		return nil, err
	}
	return personResult{Person: personInfo{ID: p.ID, Name: p.Name, Folder: x.folderOf(p.ID), Agents: []string{}}}, nil
}

// runtimePerson returns a person added at runtime; the directory's lock
// must be held.
func (x personArea) runtimePerson(id string) (*livePerson, error) {
	p, ok := x.dir.people[id]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no person %q.", id)
	}
	if p.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change them there.", id, x.cfgFile)
	}
	return p, nil
}

func (x personArea) remove(ctx context.Context, c *call) (any, error) {
	var p struct {
		ID string `json:"id"`
	}
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	x.dir.mu.Lock()
	_, err := x.runtimePerson(p.ID)
	if err == nil {
		var users []string
		for _, a := range x.dir.agents {
			if a.User == p.ID || slices.Contains(a.ActFor, p.ID) {
				users = append(users, a.Name)
			}
		}
		if len(users) > 0 {
			sort.Strings(users)
			err = errs.New(errs.Conflict, "", "%s still works for %s: remove or move %s first.", strings.Join(users, ", "), p.ID, plural(len(users), "that agent", "those agents"))
		}
	}
	var folder string
	if err == nil {
		if _, err = x.keep.RemovePerson(ctx, p.ID); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the person.")
		} else {
			// Under the lock: a person.add of the same id after it would
			// otherwise lose its folder here.
			delete(x.dir.people, p.ID)
			folder = x.folders.RemoveUser(p.ID)
		}
	}
	x.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("%s is no longer a person in Corral. Their folder was kept, with everything in it: %s. Delete it yourself when you no longer need it; adding %s again gives them the same folder.", p.ID, folder, p.ID)
	if err := x.record(ctx, c.caller.Client, "person.remove", p.ID, "folder kept at "+folder); err != nil {
		return nil, err
	}
	return personRemovedResult{ID: p.ID, Folder: folder, Kept: true, Message: msg}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
