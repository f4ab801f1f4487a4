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

	"corral/app/config"
	"corral/app/rpc"
	"corral/core/commands"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/store"
)

// Agents and people the owner manages at runtime (docs/owner.md "Agents and
// people"). The directory is the live table every bearer key is looked up
// in: the agents and people written in config.toml (read-only here) and
// those added from the dashboard, kept in SQLite. A change takes effect
// on the next call of every connection: run() reads the caller's settings
// from the directory on each call, and a removed agent's connections are
// closed.

// AgentStore is what live agents and people need of the store.
// Loading and last use are the server's; the changes the owner makes are
// the agent and person methods' (agentKeeper, personKeeper).
type AgentStore interface {
	agentKeeper
	personKeeper
	Agents(ctx context.Context) ([]store.Agent, error)
	People(ctx context.Context) ([]store.Person, error)
	AgentStates(ctx context.Context) ([]store.AgentState, error)
	TouchAgent(ctx context.Context, name string, t time.Time) error
}

// liveAgent is one entry of the directory.
type liveAgent struct {
	store.Agent
	fromConfig bool
	touched    time.Time // when LastUsed was last written to the store
}

func (a *liveAgent) caller() sandbox.Caller {
	return sandbox.Caller{Client: a.Name, User: a.User, ActFor: slices.Clone(a.ActFor),
		Paused: a.Paused, AskCommands: a.Ask, NoNetwork: a.Network == "off", Level: a.level()}
}

// level is the agent's trust level now: the one its settings make (a
// mix of settings is Custom), Read-only when the owner chose it.
func (a *liveAgent) level() policy.Level {
	return policy.LevelOf(a.Ask, a.Network, a.Level == string(policy.LevelReadOnly))
}

// setLevel gives a the settings of level l (a named one).
func setLevel(a *store.Agent, l policy.LevelInfo) {
	a.Level, a.Ask, a.Network = string(l.Level), l.AskCommands, l.Network
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
			a.Paused, a.LastUsed, a.touched, a.Level = prev.Paused, prev.LastUsed, prev.touched, prev.Level
		} else if st, ok := state[cl.Name]; ok {
			a.Paused, a.LastUsed, a.Level = st.Paused, st.LastUsed, st.Level
		}
		if li, ok := policy.LevelFor(policy.Level(a.Level)); ok {
			setLevel(&a.Agent, li) // the level the owner chose in the dashboard
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

// levelOf is the agent's trust level now ("" for a name that is no
// agent): what every question it asks carries (policy.SetLevelOf).
func (d *directory) levelOf(name string) policy.Level {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if a, ok := d.agents[name]; ok {
		return a.level()
	}
	return ""
}

// keyOf returns the hash of the agent's key now.
func (d *directory) keyOf(name string) ([32]byte, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[name]
	if !ok {
		return [32]byte{}, false
	}
	return a.KeySHA256, true
}

// personIDs lists the people's ids, sorted.
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
			if li, ok := policy.LevelFor(policy.Level(st.Level)); ok {
				setLevel(&a.Agent, li)
			}
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
	Name        string   `json:"name"`
	User        string   `json:"user"`
	ActFor      []string `json:"act_for"`
	AskCommands bool     `json:"ask_commands"`
	Network     string   `json:"network"`
	Paused      bool     `json:"paused"`
	// Level is the agent's trust level (policy.Levels), Label its name.
	Level      policy.Level `json:"level"`
	LevelLabel string       `json:"level_label"`
	FromConfig bool         `json:"from_config"`
	Created    *time.Time   `json:"created,omitempty"`
	LastUsed   *time.Time   `json:"last_used"`
}

func (a *liveAgent) info() agentInfo {
	i := agentInfo{Name: a.Name, User: a.User, ActFor: slices.Clone(a.ActFor), AskCommands: a.Ask, Network: a.Network, Paused: a.Paused, FromConfig: a.fromConfig,
		Level: a.level(), LevelLabel: a.level().Label()}
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

var agentNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$`)

// changeParams decodes the params of a change to agents or people, which
// needs the database they are kept in (managed).
func changeParams(c *call, p any, managed bool) error {
	if err := rpc.DecodeParams(c.params, p); err != nil {
		return err
	}
	if !managed {
		return errs.New(errs.Unavailable, "", "Agents cannot be managed here: Corral has no database for them.")
	}
	return nil
}

// agentKeeper is what the agent methods write to the store: the agents
// added in the dashboard, and the pause of those written in config.toml.
// Narrow so their logic is tested against a map-backed fake; the live
// directory itself is this package's own, in memory.
type agentKeeper interface {
	AddAgent(ctx context.Context, a store.Agent) error
	UpdateAgent(ctx context.Context, a store.Agent) (bool, error)
	SetAgentKey(ctx context.Context, name string, hash [32]byte) (bool, error)
	RemoveAgent(ctx context.Context, name string) (bool, error)
	SetConfigAgentPaused(ctx context.Context, name string, paused bool) error
	SetConfigAgentLevel(ctx context.Context, name, level string) error
}

// agentRuns is what pausing or removing an agent ends of the work it has
// under way: its running commands, and its questions waiting for the
// owner.
type agentRuns interface {
	StopCommandsOf(client string) int
	// HoldQuestions withdraws (paused) the agent's waiting questions and
	// denies new ones, or lets it ask again; it says how many it withdrew.
	HoldQuestions(client string, paused bool) int
}

// boxRuns is the sandbox and its commands as agentRuns; without
// approvals there are no questions to hold.
type boxRuns struct {
	*sandbox.Sandbox
	*commands.Service
}

func (b boxRuns) HoldQuestions(client string, paused bool) int {
	if pol := b.Policy(); pol != nil {
		return pol.SetClientPaused(client, paused)
	}
	return 0
}

// agentArea answers agent.list, add, update, rotate_key, pause, resume
// and remove, and client.list (webmethods.go). A change is written to the
// store first and to the live directory after, under the directory's
// lock, so a refused or failed change leaves both as they were.
type agentArea struct {
	dir     *directory             // the live table bearer keys are looked up in
	keep    agentKeeper            // nil without a database: nothing can change
	runs    agentRuns              // the agents' commands and questions
	hangUp  func(agent string) int // ends the agent's connections; says how many
	cfgFile string                 // config.toml, named when a change belongs there
	now     func() time.Time
	record  recordFunc
}

func (s *Server) agentArea() agentArea {
	return agentArea{dir: s.dir, keep: s.agents, runs: boxRuns{s.box, s.cmds}, hangUp: s.hangUpAgent,
		cfgFile: s.cfg.Path, now: s.now, record: s.record}
}

func (x agentArea) methods(add func(name string, m method)) {
	add("client.list", method{owner: true, fn: x.clientList})
	add("agent.list", method{owner: true, fn: x.list})
	add("agent.add", method{owner: true, fn: x.add})
	add("agent.update", method{owner: true, fn: x.update})
	add("agent.rotate_key", method{owner: true, fn: x.rotateKey})
	add("agent.pause", method{owner: true, fn: x.setPaused(true)})
	add("agent.resume", method{owner: true, fn: x.setPaused(false)})
	add("agent.remove", method{owner: true, fn: x.remove})
	add("agent.set_level", method{owner: true, fn: x.setLevel})
}

// hangUpAgent ends the agent's open connections and says how many.
func (s *Server) hangUpAgent(name string) int {
	return s.finishConns(func(cn *conn) bool { return !cn.caller.Owner && cn.caller.Client == name })
}

func (x agentArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	x.dir.mu.RLock()
	out := make([]agentInfo, 0, len(x.dir.agents))
	for _, a := range x.dir.ordered() {
		out = append(out, a.info())
	}
	x.dir.mu.RUnlock()
	return agentsResult{Agents: out, Managed: x.keep != nil}, nil
}

// agentParams are agent.add's and agent.update's settings.
type agentParams struct {
	Name        string    `json:"name"`
	User        *string   `json:"user,omitempty"`
	ActFor      *[]string `json:"act_for,omitempty"`
	AskCommands *bool     `json:"ask_commands,omitempty"`
	Network     *string   `json:"network,omitempty"`
	// Level, when given, sets the settings of a named trust level after
	// the others; a setting given alone makes a custom mix.
	Level *string `json:"level,omitempty"`
}

// apply validates p onto a; the directory's lock must be held.
func (x agentArea) apply(a *store.Agent, p agentParams) error {
	known := func(scope string) bool {
		_, ok := x.dir.people[scope]
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
	if p.AskCommands != nil || p.Network != nil {
		a.Level = "" // a setting of its own: the level its settings make
	}
	if p.Level != nil {
		li, err := namedLevel(*p.Level)
		if err != nil {
			return err
		}
		setLevel(a, li)
	}
	return nil
}

// namedLevel returns the named trust level's row.
func namedLevel(l string) (policy.LevelInfo, error) {
	li, ok := policy.LevelFor(policy.Level(l))
	if !ok {
		return li, errs.New(errs.InvalidParams, "", "level must be \"ask\" (Ask me), \"trusted\" (Trusted in its folder) or \"read_only\" (Read-only).")
	}
	return li, nil
}

// setLevel answers agent.set_level: the agent gets the settings of a
// named trust level, at once (its next call is judged by them); an
// agent written in config.toml keeps its level in the database.
func (x agentArea) setLevel(ctx context.Context, c *call) (any, error) {
	var p struct {
		Name  string `json:"name" rpc:"required"`
		Level string `json:"level" rpc:"required"`
	}
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	li, err := namedLevel(p.Level)
	if err != nil {
		return nil, err
	}
	x.dir.mu.Lock()
	la, ok := x.dir.agents[p.Name]
	switch {
	case !ok:
		err = errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
	case la.fromConfig:
		err = x.keep.SetConfigAgentLevel(ctx, p.Name, string(li.Level))
	default:
		a := la.Agent
		setLevel(&a, li)
		_, err = x.keep.UpdateAgent(ctx, a)
	}
	if err != nil && ok {
		err = errs.Wrap(err, errs.IO, "", "Corral could not save the trust level.")
	}
	var info agentInfo
	if err == nil {
		setLevel(&la.Agent, li)
		info = la.info()
	}
	x.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	detail := li.Label + ": " + li.Explain
	if stopped, withdrawn := x.toReadOnly(p.Name, li.Level); stopped+withdrawn > 0 {
		detail = strings.TrimSuffix(detail, ".") + fmt.Sprintf("; %d running command(s) stopped; %d waiting question(s) withdrawn", stopped, withdrawn)
	}
	if err := x.record(ctx, c.caller.Client, "agent.set_level", p.Name, detail); err != nil {
		return nil, err
	}
	return agentResult{Agent: info}, nil
}

func newAgentKey() (string, [32]byte) {
	key := "corral_" + randomString(24)
	return key, sha256.Sum256([]byte(key))
}

type agentKeyResult struct {
	Agent agentInfo `json:"agent"`
	Key   string    `json:"key"` // shown once; Corral keeps only its SHA-256
}

func (x agentArea) add(ctx context.Context, c *call) (any, error) {
	var p agentParams
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	p.Name = strings.TrimSpace(p.Name)
	if !agentNameRe.MatchString(p.Name) || strings.EqualFold(p.Name, "owner") || strings.EqualFold(p.Name, "browser") || strings.HasPrefix(p.Name, "device:") {
		return nil, errs.New(errs.InvalidParams, "", "An agent's name is 1 to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit, and not \"owner\" or \"browser\".")
	}
	key, hash := newAgentKey()
	a := store.Agent{Name: p.Name, Network: "ask", KeySHA256: hash, Created: x.now().UTC()}
	if p.User == nil {
		return nil, errs.New(errs.InvalidParams, "", "Missing parameter \"user\": the person whose folder the agent works in.")
	}
	x.dir.mu.Lock()
	if _, ok := x.dir.agents[p.Name]; ok {
		x.dir.mu.Unlock()
		return nil, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
	}
	if err := x.apply(&a, p); err != nil {
		x.dir.mu.Unlock()
		return nil, err
	}
	if err := x.keep.AddAgent(ctx, a); err != nil {
		x.dir.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return nil, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the new agent.")
	}
	la := &liveAgent{Agent: a}
	x.dir.agents[a.Name] = la
	info := la.info()
	x.dir.mu.Unlock()
	if err := x.record(ctx, c.caller.Client, "agent.add", a.Name, describeAgent(a)); err != nil {
		return nil, err
	}
	return agentKeyResult{Agent: info, Key: key}, nil
}

func describeAgent(a store.Agent) string {
	d := "works in " + a.User + "'s folder"
	if len(a.ActFor) > 0 {
		d += "; may act for " + strings.Join(a.ActFor, ", ")
	}
	if a.Level != "" {
		d += "; " + policy.Level(a.Level).Label()
	}
	if a.Ask {
		d += "; commands need approval"
	}
	d += "; network " + a.Network
	return d
}

// runtimeAgent returns the named agent for a change, refusing agents
// written in config.toml. The directory's lock must be held.
func (x agentArea) runtimeAgent(name string) (*liveAgent, error) {
	a, ok := x.dir.agents[name]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no agent called %q.", name)
	}
	if a.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change it there (Corral picks the change up by itself).", name, x.cfgFile)
	}
	return a, nil
}

func (x agentArea) update(ctx context.Context, c *call) (any, error) {
	var p agentParams
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	x.dir.mu.Lock()
	la, err := x.runtimeAgent(p.Name)
	if err != nil {
		x.dir.mu.Unlock()
		return nil, err
	}
	a := la.Agent
	a.ActFor = slices.Clone(a.ActFor)
	if err := x.apply(&a, p); err != nil {
		x.dir.mu.Unlock()
		return nil, err
	}
	if _, err := x.keep.UpdateAgent(ctx, a); err != nil {
		x.dir.mu.Unlock()
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not save the agent.")
	}
	la.Agent = a
	info := la.info()
	x.dir.mu.Unlock()
	x.toReadOnly(a.Name, policy.Level(a.Level))
	if err := x.record(ctx, c.caller.Client, "agent.update", a.Name, describeAgent(a)); err != nil {
		return nil, err
	}
	return agentResult{Agent: info}, nil
}

type nameParams struct {
	Name string `json:"name"`
}

func (x agentArea) rotateKey(ctx context.Context, c *call) (any, error) {
	var p nameParams
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	key, hash := newAgentKey()
	x.dir.mu.Lock()
	la, err := x.runtimeAgent(p.Name)
	if err == nil {
		if _, err = x.keep.SetAgentKey(ctx, p.Name, hash); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the new key.")
		} else {
			la.KeySHA256 = hash
		}
	}
	var info agentInfo
	if la != nil {
		info = la.info()
	}
	x.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	x.hangUp(p.Name) // connections opened with the old key end now
	if err := x.record(ctx, c.caller.Client, "agent.rotate_key", p.Name, "the old key stopped working"); err != nil {
		return nil, err
	}
	return agentKeyResult{Agent: info, Key: key}, nil
}

// toReadOnly ends what an agent made Read-only may no longer do but had
// begun: its running commands are stopped (they could go on writing) and
// its waiting questions other than reads withdrawn
// (policy.WithdrawForReadOnly), so that a late Allow cannot let it write.
// Nothing for another level.
func (x agentArea) toReadOnly(name string, level policy.Level) (stopped, withdrawn int) {
	if level != policy.LevelReadOnly {
		return 0, 0
	}
	stopped = x.runs.StopCommandsOf(name)
	if b, ok := x.runs.(boxRuns); ok && b.Sandbox != nil {
		if pol := b.Policy(); pol != nil {
			withdrawn = pol.WithdrawForReadOnly(name)
		}
	}
	return stopped, withdrawn
}

func (x agentArea) setPaused(paused bool) func(context.Context, *call) (any, error) {
	return func(ctx context.Context, c *call) (any, error) {
		var p nameParams
		if err := changeParams(c, &p, x.keep != nil); err != nil {
			return nil, err
		}
		x.dir.mu.Lock()
		la, ok := x.dir.agents[p.Name]
		var err error
		switch {
		case !ok:
			err = errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
		case la.fromConfig:
			err = x.keep.SetConfigAgentPaused(ctx, p.Name, paused)
		default:
			a := la.Agent
			a.Paused = paused
			_, err = x.keep.UpdateAgent(ctx, a)
		}
		if err != nil && ok {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save that.")
		}
		var info agentInfo
		if err == nil {
			la.Paused = paused
			info = la.info()
		}
		x.dir.mu.Unlock()
		if err != nil {
			return nil, err
		}
		// Its questions already waiting for the owner are withdrawn (denied,
		// resolved by "paused" on every surface), and new ones are denied
		// even from a call that began before the pause.
		withdrawn := x.runs.HoldQuestions(p.Name, paused)
		op, detail := "agent.resume", "resumed"
		if paused {
			op, detail = "agent.pause", "paused"
			if n := x.runs.StopCommandsOf(p.Name); n > 0 {
				detail += fmt.Sprintf("; %d running command(s) stopped", n)
			}
			if withdrawn > 0 {
				detail += fmt.Sprintf("; %d waiting question(s) withdrawn", withdrawn)
			}
		}
		if err := x.record(ctx, c.caller.Client, op, p.Name, detail); err != nil {
			return nil, err
		}
		return agentResult{Agent: info}, nil
	}
}

func (x agentArea) remove(ctx context.Context, c *call) (any, error) {
	var p nameParams
	if err := changeParams(c, &p, x.keep != nil); err != nil {
		return nil, err
	}
	x.dir.mu.Lock()
	_, err := x.runtimeAgent(p.Name)
	if err == nil {
		if _, err = x.keep.RemoveAgent(ctx, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the agent.")
		} else {
			delete(x.dir.agents, p.Name)
		}
	}
	x.dir.mu.Unlock()
	if err != nil {
		return nil, err
	}
	x.runs.HoldQuestions(p.Name, false) // a later agent of that name starts afresh
	stopped := x.runs.StopCommandsOf(p.Name)
	closed := x.hangUp(p.Name)
	detail := fmt.Sprintf("its key stopped working; %d connection(s) closed", closed)
	if stopped > 0 {
		detail += fmt.Sprintf(", %d running command(s) stopped", stopped)
	}
	if err := x.record(ctx, c.caller.Client, "agent.remove", p.Name, detail); err != nil {
		return nil, err
	}
	return agentRemovedResult{Name: p.Name, Removed: true, ConnectionsClosed: closed}, nil
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
