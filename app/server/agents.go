package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"corral/app/config"
	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/store"
)

// Agents and people the owner manages at runtime (README "Agents and
// people"). The directory is the live table every bearer key is looked up
// in: the agents and people written in config.toml (read-only here) and
// those added from the dashboard, kept in SQLite. A change takes effect
// on the next call of every connection: run() reads the caller's settings
// from the directory on each call, and a removed agent's connections are
// closed.

// AgentStore is what live agents and people need of the store.
type AgentStore interface {
	AddAgent(ctx context.Context, a store.Agent) error
	UpdateAgent(ctx context.Context, a store.Agent) (bool, error)
	SetAgentKey(ctx context.Context, name string, hash [32]byte) (bool, error)
	RemoveAgent(ctx context.Context, name string) (bool, error)
	Agents(ctx context.Context) ([]store.Agent, error)
	TouchAgent(ctx context.Context, name string, t time.Time) error
	SetConfigAgentPaused(ctx context.Context, name string, paused bool) error
	AgentStates(ctx context.Context) ([]store.AgentState, error)
	AddPerson(ctx context.Context, p store.Person) error
	RenamePerson(ctx context.Context, id, name string) (bool, error)
	RemovePerson(ctx context.Context, id string) (bool, error)
	People(ctx context.Context) ([]store.Person, error)
}

// liveAgent is one entry of the directory.
type liveAgent struct {
	store.Agent
	fromConfig bool
	touched    time.Time // when LastUsed was last written to the store
}

func (a *liveAgent) caller() sandbox.Caller {
	return sandbox.Caller{Client: a.Name, User: a.User, ActFor: slices.Clone(a.ActFor),
		Paused: a.Paused, AskCommands: a.Ask, NoNetwork: a.Network == "off"}
}

type livePerson struct {
	store.Person
	fromConfig bool
}

// directory holds the agents and people Corral knows now.
type directory struct {
	mu       sync.RWMutex
	agents   map[string]*liveAgent
	people   map[string]*livePerson
	cfgOrder []string // config.toml's clients, in the file's order
}

// ordered lists the agents: config.toml's in the file's order, then the
// others oldest first. The lock must be held.
func (d *directory) ordered() []*liveAgent {
	out := make([]*liveAgent, 0, len(d.agents))
	for _, n := range d.cfgOrder {
		if a, ok := d.agents[n]; ok && a.fromConfig {
			out = append(out, a)
		}
	}
	var rt []*liveAgent
	for _, a := range d.agents {
		if !a.fromConfig {
			rt = append(rt, a)
		}
	}
	sort.Slice(rt, func(i, j int) bool {
		if !rt[i].Created.Equal(rt[j].Created) {
			return rt[i].Created.Before(rt[j].Created)
		}
		return rt[i].Name < rt[j].Name
	})
	return append(out, rt...)
}

func newDirectory() *directory {
	return &directory{agents: map[string]*liveAgent{}, people: map[string]*livePerson{}}
}

// setConfig replaces the entries that come from config.toml; the runtime
// ones stay. A config name that is also a runtime agent (or person) is an
// error and nothing changes.
func (d *directory) setConfig(cfg *config.Config, states []store.AgentState) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cl := range cfg.Clients {
		if a, ok := d.agents[cl.Name]; ok && !a.fromConfig {
			return fmt.Errorf("client %q in config.toml has the name of an agent added in the dashboard; rename one of them", cl.Name)
		}
	}
	for _, u := range cfg.Users {
		if p, ok := d.people[u.ID]; ok && !p.fromConfig {
			return fmt.Errorf("user %q in config.toml is also a person added in the dashboard; remove one of them", u.ID)
		}
	}
	state := map[string]store.AgentState{}
	for _, st := range states {
		state[st.Name] = st
	}
	old := d.agents
	d.agents = map[string]*liveAgent{}
	for n, a := range old {
		if !a.fromConfig {
			d.agents[n] = a
		}
	}
	d.cfgOrder = d.cfgOrder[:0]
	for _, cl := range cfg.Clients {
		d.cfgOrder = append(d.cfgOrder, cl.Name)
		a := &liveAgent{fromConfig: true, Agent: store.Agent{Name: cl.Name, User: cl.User, ActFor: slices.Clone(cl.ActFor), Network: "ask", KeySHA256: cl.KeyHash()}}
		if cfg.Exec.Ask {
			a.Ask = true
		}
		if prev, ok := old[cl.Name]; ok && prev.fromConfig {
			a.Paused, a.LastUsed, a.touched = prev.Paused, prev.LastUsed, prev.touched
		} else if st, ok := state[cl.Name]; ok {
			a.Paused, a.LastUsed = st.Paused, st.LastUsed
		}
		d.agents[cl.Name] = a
	}
	for id, p := range d.people {
		if p.fromConfig {
			delete(d.people, id)
		}
	}
	for _, u := range cfg.Users {
		d.people[u.ID] = &livePerson{fromConfig: true, Person: store.Person{ID: u.ID, Name: u.Name}}
	}
	return nil
}

// byKey returns the agent a bearer key names. Every agent's hash is
// compared in constant time, so timing tells nothing about which was
// close.
func (d *directory) byKey(h [32]byte) (sandbox.Caller, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var found sandbox.Caller
	ok := 0
	for _, a := range d.agents {
		if subtle.ConstantTimeCompare(h[:], a.KeySHA256[:]) == 1 {
			found, ok = a.caller(), 1
		}
	}
	return found, ok == 1
}

// current returns the agent's settings as they are now.
func (d *directory) current(name string) (sandbox.Caller, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[name]
	if !ok {
		return sandbox.Caller{}, false
	}
	return a.caller(), true
}

// scopes lists the people's ids, sorted.
func (d *directory) personIDs() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	ids := make([]string, 0, len(d.people))
	for id := range d.people {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// touchEvery bounds how often an agent's last use is written to SQLite.
const touchEvery = time.Minute

// used records that name authenticated now; it reports whether the store
// should be told.
func (d *directory) used(name string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.agents[name]
	if !ok {
		return false
	}
	a.LastUsed = now
	if now.Sub(a.touched) < touchEvery {
		return false
	}
	a.touched = now
	return true
}

// LoadAgents reads the agents and people added at runtime from the store
// and makes them live; the people get their folders. The daemon calls it
// once after New.
func (s *Server) LoadAgents(ctx context.Context) error {
	if s.agents == nil {
		return nil
	}
	people, err := s.agents.People(ctx)
	if err != nil {
		return err
	}
	agents, err := s.agents.Agents(ctx)
	if err != nil {
		return err
	}
	states, err := s.agents.AgentStates(ctx)
	if err != nil {
		return err
	}
	d := s.dir
	d.mu.Lock()
	for _, p := range people {
		if _, ok := d.people[p.ID]; ok {
			continue // config.toml names it too: the file wins
		}
		if _, err := s.box.AddUser(p.ID); err != nil {
			s.log.Warn("person from the database not loaded", "user", p.ID, "err", err)
			continue
		}
		d.people[p.ID] = &livePerson{Person: p}
	}
	for _, a := range agents {
		if _, ok := d.agents[a.Name]; ok {
			s.log.Warn("agent from the database shadowed by config.toml", "client", a.Name)
			continue
		}
		d.agents[a.Name] = &liveAgent{Agent: a, touched: a.LastUsed}
	}
	for _, st := range states {
		if a, ok := d.agents[st.Name]; ok && a.fromConfig {
			a.Paused, a.LastUsed, a.touched = st.Paused, st.LastUsed, st.LastUsed
		}
	}
	d.mu.Unlock()
	return nil
}

// touchAgent notes that an agent authenticated.
func (s *Server) touchAgent(ctx context.Context, c sandbox.Caller) {
	if c.Owner || !s.dir.used(c.Client, s.now()) || s.agents == nil {
		return
	}
	if err := s.agents.TouchAgent(context.WithoutCancel(ctx), c.Client, s.now()); err != nil {
		s.log.Warn("could not record an agent's last use", "client", c.Client, "err", err)
	}
}

// agentInfo is one agent as the owner sees it: never its key.
type agentInfo struct {
	Name        string     `json:"name"`
	User        string     `json:"user"`
	ActFor      []string   `json:"act_for"`
	AskCommands bool       `json:"ask_commands"`
	Network     string     `json:"network"`
	Paused      bool       `json:"paused"`
	FromConfig  bool       `json:"from_config"`
	Created     *time.Time `json:"created,omitempty"`
	LastUsed    *time.Time `json:"last_used"`
}

func (a *liveAgent) info() agentInfo {
	i := agentInfo{Name: a.Name, User: a.User, ActFor: slices.Clone(a.ActFor), AskCommands: a.Ask, Network: a.Network, Paused: a.Paused, FromConfig: a.fromConfig}
	if i.ActFor == nil {
		i.ActFor = []string{}
	}
	if !a.Created.IsZero() {
		t := a.Created
		i.Created = &t
	}
	if !a.LastUsed.IsZero() {
		t := a.LastUsed.UTC()
		i.LastUsed = &t
	}
	return i
}

type personInfo struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	FromConfig bool     `json:"from_config"`
	Folder     string   `json:"folder"` // the host folder (the owner's view)
	Agents     []string `json:"agents"` // agents working in this folder
}

var agentNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$`)

func (s *Server) needAgents() error {
	if s.agents == nil {
		return errs.New(errs.Unavailable, "", "Agents cannot be managed here: Corral has no database for them.")
	}
	return nil
}

func (s *Server) agentList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	s.dir.mu.RLock()
	out := make([]agentInfo, 0, len(s.dir.agents))
	for _, a := range s.dir.ordered() {
		out = append(out, a.info())
	}
	s.dir.mu.RUnlock()
	return agentsResult{Agents: out, Managed: s.agents != nil}, nil
}

// agentParams are agent.add's and agent.update's settings.
type agentParams struct {
	Name        string    `json:"name"`
	User        *string   `json:"user,omitempty"`
	ActFor      *[]string `json:"act_for,omitempty"`
	AskCommands *bool     `json:"ask_commands,omitempty"`
	Network     *string   `json:"network,omitempty"`
}

// apply validates p onto a (under the directory's lock).
func (s *Server) applyAgentParams(a *store.Agent, p agentParams) error {
	known := func(scope string) bool {
		_, ok := s.dir.people[scope]
		return ok || scope == sandbox.ScopeCompanion || scope == sandbox.ScopeDefault
	}
	if p.User != nil {
		if !known(*p.User) {
			return errs.New(errs.InvalidParams, "", "There is no person %q: add them under People first, or choose \"companion\" or \"default\".", *p.User)
		}
		a.User = *p.User
	}
	if p.ActFor != nil {
		for _, v := range *p.ActFor {
			if v != "*" && !known(v) {
				return errs.New(errs.InvalidParams, "", "act_for names %q, who is not a person Corral knows.", v)
			}
		}
		a.ActFor = slices.Clone(*p.ActFor)
	}
	if p.AskCommands != nil {
		a.Ask = *p.AskCommands
	}
	if p.Network != nil {
		if *p.Network != "ask" && *p.Network != "off" {
			return errs.New(errs.InvalidParams, "", "network must be \"ask\" (commands may ask the owner for network) or \"off\".")
		}
		a.Network = *p.Network
	}
	return nil
}

func newAgentKey() (string, [32]byte) {
	key := "corral_" + randomString(24)
	return key, sha256.Sum256([]byte(key))
}

type agentKeyResult struct {
	Agent agentInfo `json:"agent"`
	Key   string    `json:"key"` // shown once; Corral keeps only its SHA-256
}

func (s *Server) agentAdd(ctx context.Context, c *call) (any, error) {
	var p agentParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	p.Name = strings.TrimSpace(p.Name)
	if !agentNameRe.MatchString(p.Name) || strings.EqualFold(p.Name, "owner") || strings.EqualFold(p.Name, "browser") || strings.HasPrefix(p.Name, "device:") {
		return nil, errs.New(errs.InvalidParams, "", "An agent's name is 1 to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit, and not \"owner\" or \"browser\".")
	}
	key, hash := newAgentKey()
	a := store.Agent{Name: p.Name, Network: "ask", KeySHA256: hash, Created: s.now().UTC()}
	if p.User == nil {
		return nil, errs.New(errs.InvalidParams, "", "Missing parameter \"user\": the person whose folder the agent works in.")
	}
	s.dir.mu.Lock()
	if _, ok := s.dir.agents[p.Name]; ok {
		s.dir.mu.Unlock()
		return nil, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
	}
	if err := s.applyAgentParams(&a, p); err != nil {
		s.dir.mu.Unlock()
		return nil, err
	}
	if err := s.agents.AddAgent(ctx, a); err != nil {
		s.dir.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return nil, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the new agent.")
	}
	la := &liveAgent{Agent: a}
	s.dir.agents[a.Name] = la
	info := la.info()
	s.dir.mu.Unlock()
	if err := s.record(ctx, c.caller.Client, "agent.add", a.Name, describeAgent(a)); err != nil {
		return nil, err
	}
	return agentKeyResult{Agent: info, Key: key}, nil
}

func describeAgent(a store.Agent) string {
	d := "works in " + a.User + "'s folder"
	if len(a.ActFor) > 0 {
		d += "; may act for " + strings.Join(a.ActFor, ", ")
	}
	if a.Ask {
		d += "; commands need approval"
	}
	d += "; network " + a.Network
	return d
}

// runtimeAgent returns the named agent for a change, refusing agents
// written in config.toml. The directory's lock must be held.
func (s *Server) runtimeAgent(name string) (*liveAgent, error) {
	a, ok := s.dir.agents[name]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no agent called %q.", name)
	}
	if a.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change it there (Corral picks the change up by itself).", name, s.cfg.Path)
	}
	return a, nil
}

func (s *Server) agentUpdate(ctx context.Context, c *call) (any, error) {
	var p agentParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	s.dir.mu.Lock()
	la, err := s.runtimeAgent(p.Name)
	if err != nil {
		s.dir.mu.Unlock()
		return nil, err
	}
	a := la.Agent
	a.ActFor = slices.Clone(a.ActFor)
	if err := s.applyAgentParams(&a, p); err != nil {
		s.dir.mu.Unlock()
		return nil, err
	}
	if _, err := s.agents.UpdateAgent(ctx, a); err != nil {
		s.dir.mu.Unlock()
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the agent.")
	}
	la.Agent = a
	info := la.info()
	s.dir.mu.Unlock()
	if err := s.record(ctx, c.caller.Client, "agent.update", a.Name, describeAgent(a)); err != nil {
		return nil, err
	}
	return agentResult{Agent: info}, nil
}

type nameParams struct {
	Name string `json:"name"`
}

func (s *Server) agentRotateKey(ctx context.Context, c *call) (any, error) {
	var p nameParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	key, hash := newAgentKey()
	s.dir.mu.Lock()
	la, err := s.runtimeAgent(p.Name)
	if err == nil {
		if _, err = s.agents.SetAgentKey(ctx, p.Name, hash); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the new key.")
		} else {
			la.KeySHA256 = hash
		}
	}
	var info agentInfo
	if la != nil {
		info = la.info()
	}
	s.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// Connections opened with the old key end now.
	s.finishConns(func(cn *conn) bool { return !cn.caller.Owner && cn.caller.Client == p.Name })
	if err := s.record(ctx, c.caller.Client, "agent.rotate_key", p.Name, "the old key stopped working"); err != nil {
		return nil, err
	}
	return agentKeyResult{Agent: info, Key: key}, nil
}

func (s *Server) agentPause(paused bool) func(context.Context, *call) (any, error) {
	return func(ctx context.Context, c *call) (any, error) {
		var p nameParams
		if err := rpc.DecodeParams(c.params, &p); err != nil {
			return nil, err
		}
		if err := s.needAgents(); err != nil {
			return nil, err
		}
		s.dir.mu.Lock()
		la, ok := s.dir.agents[p.Name]
		var err error
		switch {
		case !ok:
			err = errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
		case la.fromConfig:
			err = s.agents.SetConfigAgentPaused(ctx, p.Name, paused)
		default:
			a := la.Agent
			a.Paused = paused
			_, err = s.agents.UpdateAgent(ctx, a)
		}
		if err != nil && ok {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save that.")
		}
		var info agentInfo
		if err == nil {
			la.Paused = paused
			info = la.info()
		}
		s.dir.mu.Unlock()
		if err != nil {
			return nil, err
		}
		// Its questions already waiting for the owner are withdrawn (denied,
		// resolved by "paused" on every surface), and new ones are denied
		// even from a call that began before the pause.
		withdrawn := 0
		if pol := s.box.Policy(); pol != nil {
			withdrawn = pol.SetClientPaused(p.Name, paused)
		}
		op, detail := "agent.resume", "resumed"
		if paused {
			op, detail = "agent.pause", "paused"
			if n := s.box.StopCommandsOf(p.Name); n > 0 {
				detail += fmt.Sprintf("; %d running command(s) stopped", n)
			}
			if withdrawn > 0 {
				detail += fmt.Sprintf("; %d waiting question(s) withdrawn", withdrawn)
			}
		}
		if err := s.record(ctx, c.caller.Client, op, p.Name, detail); err != nil {
			return nil, err
		}
		return agentResult{Agent: info}, nil
	}
}

func (s *Server) agentRemove(ctx context.Context, c *call) (any, error) {
	var p nameParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	s.dir.mu.Lock()
	_, err := s.runtimeAgent(p.Name)
	if err == nil {
		if _, err = s.agents.RemoveAgent(ctx, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the agent.")
		} else {
			delete(s.dir.agents, p.Name)
		}
	}
	s.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if pol := s.box.Policy(); pol != nil {
		pol.SetClientPaused(p.Name, false) // a later agent of that name starts afresh
	}
	stopped := s.box.StopCommandsOf(p.Name)
	closed := s.countConns(func(cn *conn) bool { return !cn.caller.Owner && cn.caller.Client == p.Name })
	s.finishConns(func(cn *conn) bool { return !cn.caller.Owner && cn.caller.Client == p.Name })
	detail := fmt.Sprintf("its key stopped working; %d connection(s) closed", closed)
	if stopped > 0 {
		detail += fmt.Sprintf(", %d running command(s) stopped", stopped)
	}
	if err := s.record(ctx, c.caller.Client, "agent.remove", p.Name, detail); err != nil {
		return nil, err
	}
	return agentRemovedResult{Name: p.Name, Removed: true, ConnectionsClosed: closed}, nil
}

// countConns counts the open connections that match.
func (s *Server) countConns(match func(*conn) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if match(c) {
			n++
		}
	}
	return n
}

// People.

func (s *Server) folderOf(id string) string {
	l := s.box.Layout()
	if t, err := l.Resolve(id, "."); err == nil {
		return t.Dir
	}
	return ""
}

func (s *Server) personList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	s.dir.mu.RLock()
	out := make([]personInfo, 0, len(s.dir.people))
	for _, p := range s.dir.people {
		pi := personInfo{ID: p.ID, Name: p.Name, FromConfig: p.fromConfig, Folder: s.folderOf(p.ID), Agents: []string{}}
		for _, a := range s.dir.agents {
			if a.User == p.ID {
				pi.Agents = append(pi.Agents, a.Name)
			}
		}
		sort.Strings(pi.Agents)
		out = append(out, pi)
	}
	s.dir.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return peopleResult{People: out, Managed: s.agents != nil}, nil
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

func checkPersonName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Cf) }) {
		return errs.New(errs.InvalidParams, "", "A person's name is 1 to 100 characters, without control or invisible characters.")
	}
	return nil
}

func (s *Server) personAdd(ctx context.Context, c *call) (any, error) {
	var p personParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	p.Name = strings.TrimSpace(p.Name)
	if err := checkPersonName(p.Name); err != nil {
		return nil, err
	}
	if p.ID == "" {
		p.ID = personIDFrom(p.Name)
	}
	l := s.box.Layout()
	if !paths.SafeSegment(p.ID) || paths.ASCIIEqualFold(p.ID, l.SharedDir) || p.ID == sandbox.ScopeCompanion || p.ID == sandbox.ScopeDefault {
		return nil, errs.New(errs.InvalidParams, "", "%q cannot be a folder name for a person: use 1 to 64 letters, digits, '_' or '-', other than %q, \"companion\" and \"default\".", p.ID, l.SharedDir)
	}
	s.dir.mu.Lock()
	if _, ok := s.dir.people[p.ID]; ok {
		s.dir.mu.Unlock()
		return nil, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
	}
	person := store.Person{ID: p.ID, Name: p.Name, Created: s.now().UTC()}
	if err := s.agents.AddPerson(ctx, person); err != nil {
		s.dir.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return nil, errs.New(errs.Exists, "", "There is already a person with the folder name %q.", p.ID)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the new person.")
	}
	folder, err := s.box.AddUser(p.ID)
	if err != nil {
		s.agents.RemovePerson(context.WithoutCancel(ctx), p.ID)
		s.dir.mu.Unlock()
		return nil, err
	}
	s.dir.people[p.ID] = &livePerson{Person: person}
	s.dir.mu.Unlock()
	if err := s.record(ctx, c.caller.Client, "person.add", p.ID, p.Name+"; folder "+folder); err != nil {
		return nil, err
	}
	return personResult{Person: personInfo{ID: p.ID, Name: p.Name, Folder: folder, Agents: []string{}}}, nil
}

func (s *Server) personRename(ctx context.Context, c *call) (any, error) {
	var p struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	p.Name = strings.TrimSpace(p.Name)
	if err := checkPersonName(p.Name); err != nil {
		return nil, err
	}
	s.dir.mu.Lock()
	lp, err := s.runtimePerson(p.ID)
	if err == nil {
		if _, err = s.agents.RenamePerson(ctx, p.ID, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the name.")
		} else {
			lp.Name = p.Name
		}
	}
	s.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := s.record(ctx, c.caller.Client, "person.rename", p.ID, "now called "+p.Name); err != nil {
		return nil, err
	}
	return personResult{Person: personInfo{ID: p.ID, Name: p.Name, Folder: s.folderOf(p.ID), Agents: []string{}}}, nil
}

// runtimePerson returns a person added at runtime; the directory's lock
// must be held.
func (s *Server) runtimePerson(id string) (*livePerson, error) {
	p, ok := s.dir.people[id]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no person %q.", id)
	}
	if p.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change them there.", id, s.cfg.Path)
	}
	return p, nil
}

func (s *Server) personRemove(ctx context.Context, c *call) (any, error) {
	var p struct {
		ID string `json:"id"`
	}
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if err := s.needAgents(); err != nil {
		return nil, err
	}
	s.dir.mu.Lock()
	_, err := s.runtimePerson(p.ID)
	if err == nil {
		var users []string
		for _, a := range s.dir.agents {
			if a.User == p.ID || slices.Contains(a.ActFor, p.ID) {
				users = append(users, a.Name)
			}
		}
		if len(users) > 0 {
			sort.Strings(users)
			err = errs.New(errs.Conflict, "", "%s still works for %s: remove or move %s first.", strings.Join(users, ", "), p.ID, plural(len(users), "that agent", "those agents"))
		}
	}
	if err == nil {
		if _, err = s.agents.RemovePerson(ctx, p.ID); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the person.")
		} else {
			delete(s.dir.people, p.ID)
		}
	}
	s.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	folder := s.box.RemoveUser(p.ID)
	msg := fmt.Sprintf("%s is no longer a person in Corral. Their folder was kept, with everything in it: %s. Delete it yourself when you no longer need it; adding %s again gives them the same folder.", p.ID, folder, p.ID)
	if err := s.record(ctx, c.caller.Client, "person.remove", p.ID, "folder kept at "+folder); err != nil {
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

// FirstRun reports whether no agent has worked here yet: the tray's first
// notification and the dashboard's guide then point to connecting one.
func (s *Server) FirstRun() bool {
	s.dir.mu.RLock()
	defer s.dir.mu.RUnlock()
	for _, a := range s.dir.agents {
		if !a.LastUsed.IsZero() {
			return false
		}
	}
	return true
}
