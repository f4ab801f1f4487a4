package directory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"corral/app/config"
	"corral/core/commands"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/store"
)

// Store is what the directory needs of the store: the agents and people
// added at runtime, what the owner set for the agents of config.toml,
// and when each agent was last used. store.Store implements it.
type Store interface {
	AddAgent(ctx context.Context, a store.Agent) error
	UpdateAgent(ctx context.Context, a store.Agent) (bool, error)
	SetAgentKey(ctx context.Context, name string, hash [32]byte) (bool, error)
	RemoveAgent(ctx context.Context, name string) (bool, error)
	SetConfigAgentPaused(ctx context.Context, name string, paused bool) error
	SetConfigAgentLevel(ctx context.Context, name, level string) error
	AddPerson(ctx context.Context, p store.Person) error
	RenamePerson(ctx context.Context, id, name string) (bool, error)
	RemovePerson(ctx context.Context, id string) (bool, error)
	Agents(ctx context.Context) ([]store.Agent, error)
	People(ctx context.Context) ([]store.Person, error)
	AgentStates(ctx context.Context) ([]store.AgentState, error)
	TouchAgent(ctx context.Context, name string, t time.Time) error
}

// Runs is what pausing, removing or making an agent Read-only ends of
// the work it has under way: its running commands, and its questions
// waiting for the owner. SandboxRuns is the sandbox's.
type Runs interface {
	StopCommandsOf(client string) int
	// HoldQuestions withdraws (paused) the agent's waiting questions and
	// denies new ones, or lets it ask again; it says how many it withdrew.
	HoldQuestions(client string, paused bool) int
	// WithdrawForReadOnly withdraws the agent's waiting questions other
	// than reads (policy.WithdrawForReadOnly); it says how many.
	WithdrawForReadOnly(client string) int
	// WithdrawRemoved withdraws all the agent's waiting questions, the
	// owner having removed it (policy.WithdrawRemoved); it says how many.
	WithdrawRemoved(client string) int
}

// SandboxRuns is the sandbox and its commands as Runs; without
// approvals there are no questions to hold or withdraw.
func SandboxRuns(b *sandbox.Sandbox, c *commands.Service) Runs { return boxRuns{b, c} }

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

func (b boxRuns) WithdrawForReadOnly(client string) int {
	if b.Sandbox == nil {
		return 0
	}
	if pol := b.Policy(); pol != nil {
		return pol.WithdrawForReadOnly(client)
	}
	return 0
}

func (b boxRuns) WithdrawRemoved(client string) int {
	if b.Sandbox == nil {
		return 0
	}
	if pol := b.Policy(); pol != nil {
		return pol.WithdrawRemoved(client)
	}
	return 0
}

// Options are what a directory works with besides config.toml.
type Options struct {
	Store   Store   // nil: only config.toml's agents and people, and none can be added
	Folders Folders // the people's folders (the sandbox)
	Runs    Runs    // the agents' commands and questions
	// HangUp ends the agent's open connections and says how many.
	HangUp func(agent string) int
	// Record writes one line of the audit log, by who.
	Record func(ctx context.Context, who, op, target, detail string) error
	Now    func() time.Time // nil: time.Now
	Log    *slog.Logger     // nil: slog.Default()
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

// Directory holds the agents and people Corral knows now.
type Directory struct {
	mu       sync.RWMutex
	agents   map[string]*liveAgent
	people   map[string]*livePerson
	cfgOrder []string // config.toml's clients, in the file's order

	keep    Store // nil without a database: nothing can change
	folders Folders
	runs    Runs
	hangUp  func(agent string) int
	record  func(ctx context.Context, who, op, target, detail string) error
	cfgFile string // config.toml, named when a change belongs there
	now     func() time.Time
	log     *slog.Logger
}

// New makes a directory of cfg's agents and people; Load adds the
// store's.
func New(cfg *config.Config, o Options) *Directory {
	d := &Directory{agents: map[string]*liveAgent{}, people: map[string]*livePerson{},
		keep: o.Store, folders: o.Folders, runs: o.Runs, hangUp: o.HangUp, record: o.Record,
		cfgFile: cfg.Path, now: o.Now, log: o.Log}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.setConfig(cfg, nil) // a fresh directory: no conflicts possible
	return d
}

// ordered lists the agents: config.toml's in the file's order, then the
// others oldest first. The lock must be held.
func (d *Directory) ordered() []*liveAgent {
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

// setConfig replaces the entries that come from config.toml; the runtime
// ones stay. A config name that is also a runtime agent (or person) is an
// error and nothing changes.
func (d *Directory) setConfig(cfg *config.Config, states []store.AgentState) error {
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

// Reload puts the agents and people of cfg, config.toml read again, in
// place of the file's old ones; those added in the dashboard stay. New
// people get their folders; people gone lose theirs from the sandbox
// (the folders stay on disk). An agent of the file whose key changed or
// went away has its commands stopped and its connections closed. A name
// the file shares with an agent or person added in the dashboard is an
// error, and nothing changes.
func (d *Directory) Reload(cfg *config.Config) error {
	// Old config agents' keys and people, to see what went away.
	d.mu.RLock()
	oldKeys := map[string][32]byte{}
	oldPeople := map[string]bool{}
	for n, a := range d.agents {
		if a.fromConfig {
			oldKeys[n] = a.KeySHA256
		}
	}
	for id, p := range d.people {
		if p.fromConfig {
			oldPeople[id] = true
		}
	}
	d.mu.RUnlock()
	if err := d.setConfig(cfg, nil); err != nil {
		return err
	}
	for _, u := range cfg.Users {
		if !oldPeople[u.ID] {
			if _, err := d.folders.AddUser(u.ID); err != nil {
				d.log.Warn("new user from config.toml", "user", u.ID, "err", err)
			}
		}
		delete(oldPeople, u.ID)
	}
	// Under the directory's lock, as RemovePerson does: a person added
	// again since setConfig keeps their folder.
	d.mu.Lock()
	for id := range oldPeople {
		if _, back := d.people[id]; !back {
			d.folders.RemoveUser(id) // the folder stays
		}
	}
	d.mu.Unlock()
	for name, h := range oldKeys {
		if now, ok := d.KeyOf(name); !ok || now != h {
			if !ok {
				d.withdrawQuestions(name)
			}
			d.runs.StopCommandsOf(name)
			d.hangUp(name)
		}
	}
	return nil
}

// ByKey returns the agent a bearer key names. Every agent's hash is
// compared in constant time, so timing tells nothing about which was
// close.
func (d *Directory) ByKey(h [32]byte) (sandbox.Caller, bool) {
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

// Current returns the agent's settings as they are now.
func (d *Directory) Current(name string) (sandbox.Caller, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[name]
	if !ok {
		return sandbox.Caller{}, false
	}
	return a.caller(), true
}

// LevelOf is the agent's trust level now ("" for a name that is no
// agent): what every question it asks carries (policy.SetLevelOf).
func (d *Directory) LevelOf(name string) policy.Level {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if a, ok := d.agents[name]; ok {
		return a.level()
	}
	return ""
}

// KeyOf returns the hash of the agent's key now.
func (d *Directory) KeyOf(name string) ([32]byte, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[name]
	if !ok {
		return [32]byte{}, false
	}
	return a.KeySHA256, true
}

// FromConfig reports whether the agent name is written in config.toml.
func (d *Directory) FromConfig(name string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[name]
	return ok && a.fromConfig
}

// UserOf is the person whose folder the agent works in.
func (d *Directory) UserOf(agent string) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	a, ok := d.agents[agent]
	if !ok {
		return "", false
	}
	return a.User, true
}

// Managed reports whether agents and people can be added and changed
// here: Corral has a database for them.
func (d *Directory) Managed() bool { return d.keep != nil }

// FirstRun reports whether no agent has worked here yet: the tray's first
// notification and the dashboard's guide then point to connecting one.
func (d *Directory) FirstRun() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, a := range d.agents {
		if !a.LastUsed.IsZero() {
			return false
		}
	}
	return true
}

// touchEvery bounds how often an agent's last use is written to SQLite.
const touchEvery = time.Minute

// used records that name authenticated now; it reports whether the store
// should be told.
func (d *Directory) used(name string, now time.Time) bool {
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

// Touch notes that the agent authenticated; the store hears of it at
// most once a minute (touchEvery).
func (d *Directory) Touch(ctx context.Context, agent string) {
	if !d.used(agent, d.now()) || d.keep == nil {
		return
	}
	if err := d.keep.TouchAgent(context.WithoutCancel(ctx), agent, d.now()); err != nil {
		d.log.Warn("could not record an agent's last use", "client", agent, "err", err)
	}
}

// Load reads the agents and people added at runtime from the store and
// makes them live; the people get their folders. The daemon calls it
// once after New.
func (d *Directory) Load(ctx context.Context) error {
	if d.keep == nil {
		return nil
	}
	people, err := d.keep.People(ctx)
	if err != nil {
		return err
	}
	agents, err := d.keep.Agents(ctx)
	if err != nil {
		return err
	}
	states, err := d.keep.AgentStates(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range people {
		if _, ok := d.people[p.ID]; ok {
			continue // config.toml names it too: the file wins
		}
		if _, err := d.folders.AddUser(p.ID); err != nil {
			d.log.Warn("person from the database not loaded", "user", p.ID, "err", err)
			continue
		}
		d.people[p.ID] = &livePerson{Person: p}
	}
	for _, a := range agents {
		if _, ok := d.agents[a.Name]; ok {
			d.log.Warn("agent from the database shadowed by config.toml", "client", a.Name)
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
	return nil
}

// AgentInfo is one agent as the owner sees it: never its key.
type AgentInfo struct {
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

func (a *liveAgent) info() AgentInfo {
	i := AgentInfo{Name: a.Name, User: a.User, ActFor: slices.Clone(a.ActFor), AskCommands: a.Ask, Network: a.Network, Paused: a.Paused, FromConfig: a.fromConfig,
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

// managed refuses a change to agents or people, which needs the
// database they are kept in.
func (d *Directory) managed() error {
	if d.keep == nil {
		return errs.New(errs.Unavailable, "", "Agents cannot be managed here: Corral has no database for them.")
	}
	return nil
}

// Agents lists the agents: config.toml's in the file's order, then the
// others oldest first (agent.list).
func (d *Directory) Agents() []AgentInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]AgentInfo, 0, len(d.agents))
	for _, a := range d.ordered() {
		out = append(out, a.info())
	}
	return out
}

// AgentParams are agent.add's and agent.update's settings.
type AgentParams struct {
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
func (d *Directory) apply(a *store.Agent, p AgentParams) error {
	known := func(scope string) bool {
		_, ok := d.people[scope]
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

// LevelParams are agent.set_level's.
type LevelParams struct {
	Name  string `json:"name" rpc:"required"`
	Level string `json:"level" rpc:"required"`
}

// SetLevel answers agent.set_level: the agent gets the settings of a
// named trust level, at once (its next call is judged by them); an
// agent written in config.toml keeps its level in the database.
func (d *Directory) SetLevel(ctx context.Context, by string, p LevelParams) (AgentInfo, error) {
	if err := d.managed(); err != nil {
		return AgentInfo{}, err
	}
	li, err := namedLevel(p.Level)
	if err != nil {
		return AgentInfo{}, err
	}
	d.mu.Lock()
	la, ok := d.agents[p.Name]
	switch {
	case !ok:
		err = errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
	case la.fromConfig:
		err = d.keep.SetConfigAgentLevel(ctx, p.Name, string(li.Level))
	default:
		a := la.Agent
		setLevel(&a, li)
		_, err = d.keep.UpdateAgent(ctx, a)
	}
	if err != nil && ok {
		err = errs.Wrap(err, errs.IO, "", "Corral could not save the trust level.")
	}
	var info AgentInfo
	if err == nil {
		setLevel(&la.Agent, li)
		info = la.info()
	}
	d.mu.Unlock()
	if err != nil {
		return AgentInfo{}, err
	}
	detail := li.Label + ": " + li.Explain
	if stopped, withdrawn := d.toReadOnly(p.Name, li.Level); stopped+withdrawn > 0 {
		detail = strings.TrimSuffix(detail, ".") + fmt.Sprintf("; %d running command(s) stopped; %d waiting question(s) withdrawn", stopped, withdrawn)
	}
	if err := d.record(ctx, by, "agent.set_level", p.Name, detail); err != nil {
		return AgentInfo{}, err
	}
	return info, nil
}

func newAgentKey() (string, [32]byte) {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand)
	key := "corral_" + base64.RawURLEncoding.EncodeToString(b)
	return key, sha256.Sum256([]byte(key))
}

// AgentKey answers agent.add and agent.rotate_key.
type AgentKey struct {
	Agent AgentInfo `json:"agent"`
	Key   string    `json:"key"` // shown once; Corral keeps only its SHA-256
}

// AddAgent answers agent.add: a new agent, and its key, shown once.
func (d *Directory) AddAgent(ctx context.Context, by string, p AgentParams) (AgentKey, error) {
	if err := d.managed(); err != nil {
		return AgentKey{}, err
	}
	p.Name = strings.TrimSpace(p.Name)
	if !agentNameRe.MatchString(p.Name) || strings.EqualFold(p.Name, "owner") || strings.EqualFold(p.Name, "browser") || strings.HasPrefix(p.Name, "device:") {
		return AgentKey{}, errs.New(errs.InvalidParams, "", "An agent's name is 1 to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit, and not \"owner\" or \"browser\".")
	}
	key, hash := newAgentKey()
	a := store.Agent{Name: p.Name, Network: "ask", KeySHA256: hash, Created: d.now().UTC()}
	if p.User == nil {
		return AgentKey{}, errs.New(errs.InvalidParams, "", "Missing parameter \"user\": the person whose folder the agent works in.")
	}
	d.mu.Lock()
	if _, ok := d.agents[p.Name]; ok {
		d.mu.Unlock()
		return AgentKey{}, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
	}
	if err := d.apply(&a, p); err != nil {
		d.mu.Unlock()
		return AgentKey{}, err
	}
	if err := d.keep.AddAgent(ctx, a); err != nil {
		d.mu.Unlock()
		if errors.Is(err, store.ErrExists) {
			return AgentKey{}, errs.New(errs.Exists, "", "There is already an agent called %q.", p.Name)
		}
		return AgentKey{}, errs.Wrap(err, errs.IO, "", "Corral could not save the new agent.")
	}
	la := &liveAgent{Agent: a}
	d.agents[a.Name] = la
	info := la.info()
	d.mu.Unlock()
	if err := d.record(ctx, by, "agent.add", a.Name, describeAgent(a)); err != nil {
		return AgentKey{}, err
	}
	return AgentKey{Agent: info, Key: key}, nil
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
func (d *Directory) runtimeAgent(name string) (*liveAgent, error) {
	a, ok := d.agents[name]
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no agent called %q.", name)
	}
	if a.fromConfig {
		return nil, errs.New(errs.Forbidden, "", "%s is written in %s; change it there (Corral picks the change up by itself).", name, d.cfgFile)
	}
	return a, nil
}

// UpdateAgent answers agent.update: the settings p gives change, the
// others stay.
func (d *Directory) UpdateAgent(ctx context.Context, by string, p AgentParams) (AgentInfo, error) {
	if err := d.managed(); err != nil {
		return AgentInfo{}, err
	}
	d.mu.Lock()
	la, err := d.runtimeAgent(p.Name)
	if err != nil {
		d.mu.Unlock()
		return AgentInfo{}, err
	}
	a := la.Agent
	a.ActFor = slices.Clone(a.ActFor)
	if err := d.apply(&a, p); err != nil {
		d.mu.Unlock()
		return AgentInfo{}, err
	}
	if _, err := d.keep.UpdateAgent(ctx, a); err != nil {
		d.mu.Unlock()
		return AgentInfo{}, errs.Wrap(err, errs.IO, "", "Corral could not save the agent.")
	}
	la.Agent = a
	info := la.info()
	d.mu.Unlock()
	d.toReadOnly(a.Name, policy.Level(a.Level))
	if err := d.record(ctx, by, "agent.update", a.Name, describeAgent(a)); err != nil {
		return AgentInfo{}, err
	}
	return info, nil
}

// NameParams name an agent.
type NameParams struct {
	Name string `json:"name"`
}

// RotateKey answers agent.rotate_key: a new key, shown once; the old one
// and the connections opened with it end now.
func (d *Directory) RotateKey(ctx context.Context, by string, p NameParams) (AgentKey, error) {
	if err := d.managed(); err != nil {
		return AgentKey{}, err
	}
	key, hash := newAgentKey()
	d.mu.Lock()
	la, err := d.runtimeAgent(p.Name)
	if err == nil {
		if _, err = d.keep.SetAgentKey(ctx, p.Name, hash); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not save the new key.")
		} else {
			la.KeySHA256 = hash
		}
	}
	var info AgentInfo
	if la != nil {
		info = la.info()
	}
	d.mu.Unlock()
	if err != nil {
		return AgentKey{}, err
	}
	d.hangUp(p.Name) // connections opened with the old key end now
	if err := d.record(ctx, by, "agent.rotate_key", p.Name, "the old key stopped working"); err != nil {
		return AgentKey{}, err
	}
	return AgentKey{Agent: info, Key: key}, nil
}

// toReadOnly ends what an agent made Read-only may no longer do but had
// begun: its running commands are stopped (they could go on writing) and
// its waiting questions other than reads withdrawn
// (policy.WithdrawForReadOnly), so that a late Allow cannot let it write.
// Nothing for another level.
func (d *Directory) toReadOnly(name string, level policy.Level) (stopped, withdrawn int) {
	if level != policy.LevelReadOnly {
		return 0, 0
	}
	return d.runs.StopCommandsOf(name), d.runs.WithdrawForReadOnly(name)
}

// Pause answers agent.pause: the agent's calls are refused, its running
// commands stopped and its waiting questions withdrawn until Resume.
func (d *Directory) Pause(ctx context.Context, by string, p NameParams) (AgentInfo, error) {
	return d.setPaused(ctx, by, p.Name, true)
}

// Resume answers agent.resume.
func (d *Directory) Resume(ctx context.Context, by string, p NameParams) (AgentInfo, error) {
	return d.setPaused(ctx, by, p.Name, false)
}

func (d *Directory) setPaused(ctx context.Context, by, name string, paused bool) (AgentInfo, error) {
	if err := d.managed(); err != nil {
		return AgentInfo{}, err
	}
	d.mu.Lock()
	la, ok := d.agents[name]
	var err error
	switch {
	case !ok:
		err = errs.New(errs.NotFound, "", "There is no agent called %q.", name)
	case la.fromConfig:
		err = d.keep.SetConfigAgentPaused(ctx, name, paused)
	default:
		a := la.Agent
		a.Paused = paused
		_, err = d.keep.UpdateAgent(ctx, a)
	}
	if err != nil && ok {
		err = errs.Wrap(err, errs.IO, "", "Corral could not save that.")
	}
	var info AgentInfo
	if err == nil {
		la.Paused = paused
		info = la.info()
	}
	d.mu.Unlock()
	if err != nil {
		return AgentInfo{}, err
	}
	// Its questions already waiting for the owner are withdrawn (denied,
	// resolved by "paused" on every surface), and new ones are denied
	// even from a call that began before the pause.
	withdrawn := d.runs.HoldQuestions(name, paused)
	op, detail := "agent.resume", "resumed"
	if paused {
		op, detail = "agent.pause", "paused"
		if n := d.runs.StopCommandsOf(name); n > 0 {
			detail += fmt.Sprintf("; %d running command(s) stopped", n)
		}
		if withdrawn > 0 {
			detail += fmt.Sprintf("; %d waiting question(s) withdrawn", withdrawn)
		}
	}
	if err := d.record(ctx, by, op, name, detail); err != nil {
		return AgentInfo{}, err
	}
	return info, nil
}

// withdrawQuestions withdraws the questions still waiting of an agent
// that is gone, telling it so: hanging up does not end one asked in an
// MCP request over HTTP, and the owner's Allow on it would let the
// removed agent act. It says how many it withdrew.
func (d *Directory) withdrawQuestions(name string) int {
	return d.runs.WithdrawRemoved(name)
}

// RemoveAgent answers agent.remove: its key stops working, its
// connections close (it says how many) and its commands stop.
func (d *Directory) RemoveAgent(ctx context.Context, by string, p NameParams) (closed int, err error) {
	if err := d.managed(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	_, err = d.runtimeAgent(p.Name)
	if err == nil {
		if _, err = d.keep.RemoveAgent(ctx, p.Name); err != nil {
			err = errs.Wrap(err, errs.IO, "", "Corral could not remove the agent.")
		} else {
			delete(d.agents, p.Name)
		}
	}
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	withdrawn := d.withdrawQuestions(p.Name)
	stopped := d.runs.StopCommandsOf(p.Name)
	closed = d.hangUp(p.Name)
	detail := fmt.Sprintf("its key stopped working; %d connection(s) closed", closed)
	if stopped > 0 {
		detail += fmt.Sprintf(", %d running command(s) stopped", stopped)
	}
	if withdrawn > 0 {
		detail += fmt.Sprintf(", %d waiting question(s) withdrawn", withdrawn)
	}
	if err := d.record(ctx, by, "agent.remove", p.Name, detail); err != nil {
		return 0, err
	}
	return closed, nil
}
