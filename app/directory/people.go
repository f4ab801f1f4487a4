package directory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/store"
)

// People the owner manages at runtime (docs/owner.md "Agents and people"): each
// has a folder under the sandbox base, which outlives them.

// Folders is what the people methods use of the sandbox: each person's
// folder, made when they are added and kept when they go.
type Folders interface {
	AddUser(id string) (folder string, err error)
	RemoveUser(id string) (folder string)
	Layout() paths.Layout
}

// PersonInfo is one person as the owner sees them.
type PersonInfo struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	FromConfig bool     `json:"from_config"`
	Folder     string   `json:"folder"` // the host folder (the owner's view)
	Agents     []string `json:"agents"` // agents working in this folder
}

// folderOf is the person's folder on this computer ("" if it has none).
func (d *Directory) folderOf(id string) string {
	l := d.folders.Layout()
	if t, err := l.Resolve(id, "."); err == nil {
		return t.Dir
	}
	return ""
}

// People lists the people by id, each with the agents working in their
// folder (person.list).
func (d *Directory) People() []PersonInfo {
	d.mu.RLock()
	out := make([]PersonInfo, 0, len(d.people))
	for _, p := range d.people {
		pi := PersonInfo{ID: p.ID, Name: p.Name, FromConfig: p.fromConfig, Folder: d.folderOf(p.ID), Agents: []string{}}
		for _, a := range d.agents {
			if a.User == p.ID {
				pi.Agents = append(pi.Agents, a.Name)
			}
		}
		sort.Strings(pi.Agents)
		out = append(out, pi)
	}
	d.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PersonIDs lists the people's ids, sorted.
func (d *Directory) PersonIDs() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	ids := make([]string, 0, len(d.people))
	for id := range d.people {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// HasPerson reports whether id is a person's.
func (d *Directory) HasPerson(id string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.people[id]
	return ok
}

// PersonParams are person.add's and person.rename's: the id (folder
// name) is made of the name when person.add is not given one.
type PersonParams struct {
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

// AddPerson answers person.add: a new person, and their folder.
func (d *Directory) AddPerson(ctx context.Context, by string, p PersonParams) (PersonInfo, error) {
	if err := d.managed(); err != nil {
		return PersonInfo{}, err
	}
	var err error
	if p.Name, err = personName(p.Name); err != nil {
		return PersonInfo{}, err
	}
	if p.ID == "" {
		p.ID = personIDFrom(p.Name)
	}
	shared := d.folders.Layout().SharedDir
	if !paths.SafeSegment(p.ID) || paths.ASCIIEqualFold(p.ID, shared) || p.ID == sandbox.ScopeCompanion || p.ID == sandbox.ScopeDefault {
		return PersonInfo{}, errs.New(errs.InvalidParams, "", "%q cannot be a folder name for a person: use 1 to 64 letters, digits, '_' or '-', other than %q, \"companion\" and \"default\".", p.ID, shared)
	}
	d.mu.Lock()
	if _, ok := d.people[p.ID]; ok {
		d.mu.Unlock()
		return PersonInfo{}, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
	}
	person := store.Person{ID: p.ID, Name: p.Name, Created: d.now().UTC()}
	if err := d.keep.AddPerson(ctx, person); err != nil {
		d.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return PersonInfo{}, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
		}
		return PersonInfo{}, errs.Wrap(err, errs.IO, "", "Corral could not save the new person.")
	}
	folder, err := d.folders.AddUser(p.ID)
	if err != nil {
		d.keep.RemovePerson(context.WithoutCancel(ctx), p.ID)
		d.mu.Unlock()
		return PersonInfo{}, err
	}
	d.people[p.ID] = &livePerson{Person: person}
	d.mu.Unlock()
	if err := d.record(ctx, by, "person.add", p.ID, p.Name+"; folder "+folder); err != nil {
		return PersonInfo{}, err
	}
	return PersonInfo{ID: p.ID, Name: p.Name, Folder: folder, Agents: []string{}}, nil
}

// RenamePerson answers person.rename: their folder keeps its name.
func (d *Directory) RenamePerson(ctx context.Context, by string, p PersonParams) (PersonInfo, error) {
	if err := d.managed(); err != nil {
		return PersonInfo{}, err
	}
	var err error
	if p.Name, err = personName(p.Name); err != nil {
		return PersonInfo{}, err
	}
	d.mu.Lock()
	lp, err := d.runtimePerson(p.ID)
	if err == nil {
		if _, err = d.keep.RenamePerson(ctx, p.ID, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the name.")
		} else {
			lp.Name = p.Name
		}
	}
	d.mu.Unlock()
	if err != nil {
		return PersonInfo{}, err
	}
	if err := d.record(ctx, by, "person.rename", p.ID, "now called "+p.Name); err != nil {
		return PersonInfo{}, err
	}
	return PersonInfo{ID: p.ID, Name: p.Name, Folder: d.folderOf(p.ID), Agents: []string{}}, nil
}

// runtimePerson returns a person added at runtime; the directory's lock
// must be held.
func (d *Directory) runtimePerson(id string) (*livePerson, error) {
	p, ok := d.people[id]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no person %q.", id)
	}
	if p.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change them there.", id, d.cfgFile)
	}
	return p, nil
}

// IDParams name a person.
type IDParams struct {
	ID string `json:"id"`
}

// PersonRemoved is what RemovePerson says: where the folder was kept,
// in the owner's words.
type PersonRemoved struct {
	Folder  string
	Message string
}

// RemovePerson answers person.remove: they go, their folder stays. A
// person an agent still works or acts for cannot go.
func (d *Directory) RemovePerson(ctx context.Context, by string, p IDParams) (PersonRemoved, error) {
	if err := d.managed(); err != nil {
		return PersonRemoved{}, err
	}
	d.mu.Lock()
	_, err := d.runtimePerson(p.ID)
	if err == nil {
		var users []string
		for _, a := range d.agents {
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
		if _, err = d.keep.RemovePerson(ctx, p.ID); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the person.")
		} else {
			// Under the lock: a person.add of the same id after it would
			// otherwise lose its folder here.
			delete(d.people, p.ID)
			folder = d.folders.RemoveUser(p.ID)
		}
	}
	d.mu.Unlock()
	if err != nil {
		return PersonRemoved{}, err
	}
	msg := fmt.Sprintf("%s is no longer a person in Corral. Their folder was kept, with everything in it: %s. Delete it yourself when you no longer need it; adding %s again gives them the same folder.", p.ID, folder, p.ID)
	if err := d.record(ctx, by, "person.remove", p.ID, "folder kept at "+folder); err != nil {
		return PersonRemoved{}, err
	}
	return PersonRemoved{Folder: folder, Message: msg}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
