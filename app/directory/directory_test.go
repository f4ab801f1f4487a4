package directory

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/app/config"
	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/testkit/errkind"
	"corral/store"
)

// The directory against fakes of what it writes: the store
// (fakeKeeper), the sandbox's commands and questions (fakeRuns) and
// folders (fakeFolders), the connections (a hang-up func). The table
// itself is the real one, in memory: it is what the server authenticates
// bearer keys against, so these tests ask it whether a key works.
// app/server's TestAgentsAtRuntime runs the same methods over the wire,
// against SQLite, bubblewrap and real connections.

// The store implements what the directory needs of it.
var _ Store = (*store.Store)(nil)

// fakeKeeper is a Store over maps: what the store holds.
type fakeKeeper struct {
	agents       map[string]store.Agent
	people       map[string]store.Person
	configPaused map[string]bool // pauses of agents written in config.toml
	touched      []string        // TouchAgent's calls, by agent
}

func newFakeKeeper() *fakeKeeper {
	return &fakeKeeper{agents: map[string]store.Agent{}, people: map[string]store.Person{}, configPaused: map[string]bool{}}
}

func (k *fakeKeeper) AddAgent(ctx context.Context, a store.Agent) error {
	if _, ok := k.agents[a.Name]; ok {
		return store.ErrExists
	}
	k.agents[a.Name] = a
	return nil
}

func (k *fakeKeeper) UpdateAgent(ctx context.Context, a store.Agent) (bool, error) {
	_, ok := k.agents[a.Name]
	if ok {
		k.agents[a.Name] = a
	}
	return ok, nil
}

func (k *fakeKeeper) SetAgentKey(ctx context.Context, name string, hash [32]byte) (bool, error) {
	a, ok := k.agents[name]
	if ok {
		a.KeySHA256 = hash
		k.agents[name] = a
	}
	return ok, nil
}

func (k *fakeKeeper) RemoveAgent(ctx context.Context, name string) (bool, error) {
	_, ok := k.agents[name]
	delete(k.agents, name)
	return ok, nil
}

func (k *fakeKeeper) SetConfigAgentPaused(ctx context.Context, name string, paused bool) error {
	k.configPaused[name] = paused
	return nil
}

func (k *fakeKeeper) SetConfigAgentLevel(ctx context.Context, name, level string) error {
	return nil
}

func (k *fakeKeeper) AddPerson(ctx context.Context, p store.Person) error {
	if _, ok := k.people[p.ID]; ok {
		return store.ErrExists
	}
	k.people[p.ID] = p
	return nil
}

func (k *fakeKeeper) RenamePerson(ctx context.Context, id, name string) (bool, error) {
	p, ok := k.people[id]
	if ok {
		p.Name = name
		k.people[id] = p
	}
	return ok, nil
}

func (k *fakeKeeper) RemovePerson(ctx context.Context, id string) (bool, error) {
	_, ok := k.people[id]
	delete(k.people, id)
	return ok, nil
}

func (k *fakeKeeper) Agents(ctx context.Context) ([]store.Agent, error) {
	out := []store.Agent{}
	for _, a := range k.agents {
		out = append(out, a)
	}
	return out, nil
}

func (k *fakeKeeper) People(ctx context.Context) ([]store.Person, error) {
	out := []store.Person{}
	for _, p := range k.people {
		out = append(out, p)
	}
	return out, nil
}

func (k *fakeKeeper) AgentStates(ctx context.Context) ([]store.AgentState, error) {
	var out []store.AgentState
	for name, paused := range k.configPaused {
		out = append(out, store.AgentState{Name: name, Paused: paused})
	}
	return out, nil
}

func (k *fakeKeeper) TouchAgent(ctx context.Context, name string, t time.Time) error {
	k.touched = append(k.touched, name)
	return nil
}

// fakeRuns is Runs over the number of commands each agent has
// running and questions waiting, and which agents' questions are held.
type fakeRuns struct {
	commands, questions map[string]int
	held                map[string]bool
}

func (r *fakeRuns) StopCommandsOf(client string) int {
	n := r.commands[client]
	delete(r.commands, client)
	return n
}

func (r *fakeRuns) HoldQuestions(client string, paused bool) int {
	r.held[client] = paused
	if !paused {
		return 0
	}
	n := r.questions[client]
	delete(r.questions, client)
	return n
}

// WithdrawForReadOnly withdraws all of the agent's questions: these
// fakes ask only to write.
func (r *fakeRuns) WithdrawForReadOnly(client string) int {
	n := r.questions[client]
	delete(r.questions, client)
	return n
}

// WithdrawRemoved withdraws all of the agent's questions.
func (r *fakeRuns) WithdrawRemoved(client string) int {
	n := r.questions[client]
	delete(r.questions, client)
	return n
}

// auditDetails collects what the directory records, one "who op target: detail"
// a line.
type auditDetails []string

func (l *auditDetails) record(ctx context.Context, who, op, target, detail string) error {
	*l = append(*l, who+" "+op+" "+target+": "+detail)
	return nil
}

var areaClock = func() time.Time { return time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC) }

// agentsFixture is a directory with ann and bob in config.toml, the agent
// "writer" there too.
type agentsFixture struct {
	dir     *Directory
	keep    *fakeKeeper
	runs    *fakeRuns
	folders *fakeFolders
	hung    []string
	log     auditDetails
}

const writerKey = "corral_writer_key_from_config"

func newAgentsFixture(t *testing.T) *agentsFixture {
	t.Helper()
	f := &agentsFixture{keep: newFakeKeeper(), folders: &fakeFolders{made: map[string]bool{}},
		runs: &fakeRuns{commands: map[string]int{}, questions: map[string]int{}, held: map[string]bool{}}}
	f.dir = New(testConfig(), Options{Store: f.keep, Folders: f.folders, Runs: f.runs, Now: areaClock, Record: f.log.record,
		HangUp: func(agent string) int { f.hung = append(f.hung, agent); return 2 }})
	return f
}

// testConfig is a config.toml with ann and bob, and the agent writer
// working in ann's folder.
func testConfig() *config.Config {
	return &config.Config{Path: "/home/owner/.config/corral/config.toml",
		Users:   []config.User{{ID: "ann", Name: "Ann"}, {ID: "bob", Name: "Bob"}},
		Clients: []config.Client{{Name: "writer", Key: writerKey, User: "ann"}}}
}

// params decodes a method's params as app/server does.
func params[P any](t *testing.T, s string) P {
	t.Helper()
	var p P
	if err := rpc.DecodeParams(json.RawMessage(s), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// wireOf is a value as the client reads it.
func wireOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// add adds an agent through agent.add and returns its key.
func (f *agentsFixture) add(t *testing.T, s string) string {
	t.Helper()
	res, err := f.dir.AddAgent(t.Context(), "owner", params[AgentParams](t, s))
	if err != nil {
		t.Fatal(err)
	}
	return res.Key
}

// works says whether the directory lets key in, and as whom.
func (f *agentsFixture) works(key string) (string, bool) {
	c, ok := f.dir.ByKey(sha256.Sum256([]byte(key)))
	return c.Client, ok
}

func TestAgentAddGivesAKeyThatWorksAtOnce(t *testing.T) {
	f := newAgentsFixture(t)
	res, err := f.dir.AddAgent(t.Context(), "owner", params[AgentParams](t, `{"name":" bot ","user":"ann","act_for":["bob"],"network":"off"}`))
	if err != nil {
		t.Fatal(err)
	}
	added := res
	if w := wireOf(t, added.Agent); w != `{"name":"bot","user":"ann","act_for":["bob"],"ask_commands":false,"network":"off","paused":false,"level":"custom","level_label":"Custom","from_config":false,"created":"2026-11-25T09:30:00Z","last_used":null}` {
		t.Errorf("agent.add answered %s", w)
	}
	if who, ok := f.works(added.Key); !ok || who != "bot" {
		t.Errorf("the new key lets in %q (%v), want bot", who, ok)
	}
	if a, ok := f.keep.agents["bot"]; !ok || a.KeySHA256 != sha256.Sum256([]byte(added.Key)) {
		t.Errorf("the store holds %+v, want bot with its key's hash", f.keep.agents)
	}
	if !slices.Equal(f.log, auditDetails{"owner agent.add bot: works in ann's folder; may act for bob; network off"}) {
		t.Errorf("audit: %q", f.log)
	}
}

func TestAgentAddWithATakenNameIsRefusedAndWritesNothing(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"ann"}`)
	before := f.keep.agents["bot"]
	f.log = nil
	for _, tc := range []struct {
		params string
		kind   errs.Kind
	}{
		{`{"name":"bot","user":"bob"}`, errs.Exists},    // added in the dashboard
		{`{"name":"writer","user":"bob"}`, errs.Exists}, // written in config.toml
		{`{"name":"owner","user":"ann"}`, errs.InvalidParams},
		{`{"name":"device:x","user":"ann"}`, errs.InvalidParams},
		{`{"name":"new"}`, errs.InvalidParams},                // whose folder?
		{`{"name":"new","user":"carol"}`, errs.InvalidParams}, // nobody Corral knows
		{`{"name":"new","user":"ann","act_for":["carol"]}`, errs.InvalidParams},
		{`{"name":"new","user":"ann","network":"on"}`, errs.InvalidParams},
	} {
		_, err := f.dir.AddAgent(t.Context(), "owner", params[AgentParams](t, tc.params))
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.params, err, tc.kind)
		}
	}
	if len(f.keep.agents) != 1 || f.keep.agents["bot"].User != before.User || len(f.log) != 0 {
		t.Errorf("refused adds wrote: store %+v, audit %q", f.keep.agents, f.log)
	}
	if _, ok := f.dir.Current("new"); ok {
		t.Error("a refused agent is in the directory")
	}
	if c, _ := f.dir.Current("writer"); c.User != "ann" {
		t.Errorf("the config agent became %+v", c)
	}
}

func TestAgentRemoveEndsItsKeyConnectionsAndCommands(t *testing.T) {
	f := newAgentsFixture(t)
	key := f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.commands["bot"] = 1
	f.log = nil

	res, err := f.dir.RemoveAgent(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res != 2 {
		t.Errorf("agent.remove closed %d connections, want the 2 open", res)
	}
	if !slices.Equal(f.hung, []string{"bot"}) {
		t.Errorf("connections hung up: %v, want bot's", f.hung)
	}
	if _, ok := f.works(key); ok {
		t.Error("the removed agent's key still works")
	}
	if _, ok := f.keep.agents["bot"]; ok || f.runs.commands["bot"] != 0 {
		t.Errorf("after remove: store %+v, commands %v", f.keep.agents, f.runs.commands)
	}
	if f.runs.held["bot"] {
		t.Error("a later agent called bot would find its questions held")
	}
	if !slices.Equal(f.log, auditDetails{"owner agent.remove bot: its key stopped working; 2 connection(s) closed, 1 running command(s) stopped"}) {
		t.Errorf("audit: %q", f.log)
	}

	// An agent written in config.toml is removed there; nothing is hung up.
	_, err = f.dir.RemoveAgent(t.Context(), "owner", params[NameParams](t, `{"name":"writer"}`))
	errkind.Want(t, err, errs.Forbidden)
	if !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("the refusal does not say where to change it: %v", err)
	}
	_, err = f.dir.RemoveAgent(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`))
	errkind.Want(t, err, errs.NotFound)
	if len(f.hung) != 1 || len(f.log) != 1 {
		t.Errorf("refused removes hung up %v, recorded %q", f.hung, f.log)
	}
	if _, ok := f.works(writerKey); !ok {
		t.Error("the config agent's key stopped working")
	}
}

// TestAgentRemoveWithdrawsItsQuestions: a removed agent's questions
// still waiting for the owner are withdrawn, as a pause withdraws them.
// Hanging up ends those asked over /ws, but not one asked in an MCP
// request over HTTP: before the fix, on the daemon, the owner's Allow
// on that card after agent.remove let the removed agent write a file
// outside its folder.
func TestAgentRemoveWithdrawsItsQuestions(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.questions["bot"] = 1
	f.log = nil
	if _, err := f.dir.RemoveAgent(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`)); err != nil {
		t.Fatal(err)
	}
	if n := f.runs.questions["bot"]; n != 0 {
		t.Errorf("%d question(s) of the removed agent still wait for the owner", n)
	}
	if f.runs.held["bot"] {
		t.Error("a later agent called bot would find its questions held")
	}
	if len(f.log) != 1 || !strings.Contains(f.log[0], "1 waiting question(s) withdrawn") {
		t.Errorf("audit: %q", f.log)
	}
}

func TestAgentRotateKeyRetiresTheOldKey(t *testing.T) {
	f := newAgentsFixture(t)
	old := f.add(t, `{"name":"bot","user":"ann"}`)
	res, err := f.dir.RotateKey(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	key := res.Key
	if key == old || !strings.HasPrefix(key, "corral_") {
		t.Fatalf("rotate_key gave %q after %q", key, old)
	}
	if _, ok := f.works(old); ok {
		t.Error("the old key still works")
	}
	if who, ok := f.works(key); !ok || who != "bot" {
		t.Errorf("the new key lets in %q (%v)", who, ok)
	}
	if f.keep.agents["bot"].KeySHA256 != sha256.Sum256([]byte(key)) {
		t.Error("the store kept the old key's hash")
	}
	if !slices.Equal(f.hung, []string{"bot"}) {
		t.Errorf("connections hung up: %v, want those opened with the old key", f.hung)
	}
	_, err = f.dir.RotateKey(t.Context(), "owner", params[NameParams](t, `{"name":"writer"}`))
	errkind.Want(t, err, errs.Forbidden)
	if _, ok := f.works(writerKey); !ok || len(f.hung) != 1 {
		t.Errorf("a refused rotate changed the config agent's key or hung up %v", f.hung)
	}
}

func TestAgentPauseAndResume(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.commands["bot"], f.runs.questions["bot"] = 2, 1
	f.log = nil

	res, err := f.dir.Pause(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); !strings.Contains(w, `"paused":true`) {
		t.Errorf("agent.pause answered %s", w)
	}
	if c, _ := f.dir.Current("bot"); !c.Paused || !f.keep.agents["bot"].Paused || !f.runs.held["bot"] {
		t.Errorf("paused: directory %v, store %v, questions held %v", c.Paused, f.keep.agents["bot"].Paused, f.runs.held["bot"])
	}
	if _, err := f.dir.Resume(t.Context(), "owner", params[NameParams](t, `{"name":"bot"}`)); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.dir.Current("bot"); c.Paused || f.keep.agents["bot"].Paused || f.runs.held["bot"] {
		t.Errorf("resumed: directory %v, store %v, questions held %v", c.Paused, f.keep.agents["bot"].Paused, f.runs.held["bot"])
	}
	want := auditDetails{
		"owner agent.pause bot: paused; 2 running command(s) stopped; 1 waiting question(s) withdrawn",
		"owner agent.resume bot: resumed",
	}
	if !slices.Equal(f.log, want) {
		t.Errorf("audit: %q", f.log)
	}

	// An agent written in config.toml is paused too; the store keeps only
	// its pause.
	if _, err := f.dir.Pause(t.Context(), "owner", params[NameParams](t, `{"name":"writer"}`)); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.dir.Current("writer"); !c.Paused || !f.keep.configPaused["writer"] {
		t.Errorf("config agent: paused %v, stored %v", c.Paused, f.keep.configPaused)
	}
	_, err = f.dir.Pause(t.Context(), "owner", params[NameParams](t, `{"name":"nobody"}`))
	errkind.Want(t, err, errs.NotFound)
}

func TestAgentListsConfigAgentsFirst(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"bob"}`)
	if w := wireOf(t, f.dir.Clients()); w != `[{"name":"writer","user":"ann","act_for":[]},{"name":"bot","user":"bob","act_for":[]}]` {
		t.Errorf("client.list = %s", w)
	}
	if w := wireOf(t, f.dir.Agents()); !strings.HasPrefix(w, `[{"name":"writer",`) || !strings.Contains(w, `{"name":"bot",`) || !f.dir.Managed() {
		t.Errorf("agent.list = %s, managed %v", w, f.dir.Managed())
	}
}

func TestAgentWithoutDatabase(t *testing.T) {
	f := newAgentsFixture(t)
	f.dir.keep = nil
	if f.dir.Managed() || len(f.dir.Agents()) != 1 {
		t.Errorf("without a database: managed %v, agents %v", f.dir.Managed(), f.dir.Agents())
	}
	ctx, bot, writer := t.Context(), NameParams{Name: "bot"}, NameParams{Name: "writer"}
	ann := params[AgentParams](t, `{"name":"bot","user":"ann"}`)
	for _, change := range []func() error{
		func() error { _, err := f.dir.AddAgent(ctx, "owner", ann); return err },
		func() error { _, err := f.dir.UpdateAgent(ctx, "owner", ann); return err },
		func() error { _, err := f.dir.RotateKey(ctx, "owner", bot); return err },
		func() error { _, err := f.dir.Pause(ctx, "owner", writer); return err },
		func() error {
			_, err := f.dir.SetLevel(ctx, "owner", LevelParams{Name: "writer", Level: "ask"})
			return err
		},
		func() error { _, err := f.dir.RemoveAgent(ctx, "owner", bot); return err },
		func() error { _, err := f.dir.AddPerson(ctx, "owner", PersonParams{Name: "Carol"}); return err },
		func() error { _, err := f.dir.RemovePerson(ctx, "owner", IDParams{ID: "ann"}); return err },
	} {
		err := change()
		errkind.Want(t, err, errs.Unavailable)
		if !strings.Contains(err.Error(), "no database") {
			t.Error(err)
		}
	}
	if len(f.hung) != 0 || len(f.log) != 0 {
		t.Errorf("without a database: hung up %v, recorded %q", f.hung, f.log)
	}
}

// fakeFolders is personFolders over a map of folders by person under
// /srv/corral.
type fakeFolders struct {
	made   map[string]bool // folders made, by person
	broken bool            // AddUser fails
	// forgetting, if set, is called as RemoveUser begins: another call
	// of the owner's that comes in then.
	forgetting func(id string)
}

func (fakeFolders) Layout() paths.Layout {
	return paths.Layout{Base: "/srv/corral", SharedDir: "share"}
}

func (f *fakeFolders) AddUser(id string) (string, error) {
	if f.broken {
		return "", errs.New(errs.IO, "", "The disk is full.")
	}
	f.made[id] = true
	return "/srv/corral/" + id, nil
}

func (f *fakeFolders) RemoveUser(id string) string {
	if f.forgetting != nil {
		f.forgetting(id)
	}
	delete(f.made, id)
	return "/srv/corral/" + id
}

func newPeople(t *testing.T) (*Directory, *fakeKeeper, *fakeFolders, *auditDetails) {
	f := newAgentsFixture(t)
	return f.dir, f.keep, f.folders, &f.log
}

func TestPersonAddMakesTheirFolder(t *testing.T) {
	d, keep, folders, log := newPeople(t)
	res, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Ana María"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"id":"ana-mar-a","name":"Ana María","from_config":false,"folder":"/srv/corral/ana-mar-a","agents":[]}` {
		t.Errorf("person.add answered %s", w)
	}
	if !folders.made["ana-mar-a"] || keep.people["ana-mar-a"].Name != "Ana María" || len(*log) != 1 {
		t.Errorf("folders %v, store %v, audit %q", folders.made, keep.people, *log)
	}
	for _, ps := range []string{
		`{"name":"Ann"}`, // her folder name "ann" is config.toml's Ann's
		`{"name":"Ana María"}`,
	} {
		_, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, ps))
		errkind.Want(t, err, errs.Exists)
	}
	for _, ps := range []string{`{"name":"Shared","id":"SHARE"}`, `{"name":"C","id":"companion"}`, `{"name":"   "}`, `{"name":"a\u200bb"}`} {
		_, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, ps))
		errkind.Want(t, err, errs.InvalidParams)
	}
	if len(keep.people) != 1 || len(folders.made) != 1 || len(*log) != 1 {
		t.Errorf("refused adds wrote: store %v, folders %v, audit %q", keep.people, folders.made, *log)
	}

	// A folder that cannot be made undoes the store's write.
	folders.broken = true
	_, err = d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Carol"}`))
	errkind.Want(t, err, errs.IO)
	if _, ok := keep.people["carol"]; ok {
		t.Error("a person without a folder stayed in the store")
	}
}

func TestPersonRemoveKeepsTheFolder(t *testing.T) {
	d, keep, _, log := newPeople(t)
	if _, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Carol"}`)); err != nil {
		t.Fatal(err)
	}
	d.agents["helper"] = &liveAgent{Agent: store.Agent{Name: "helper", User: "ann", ActFor: []string{"carol"}}}
	_, err := d.RemovePerson(t.Context(), "owner", params[IDParams](t, `{"id":"carol"}`))
	errkind.Want(t, err, errs.Conflict)
	if err == nil || !strings.Contains(err.Error(), "helper still works for carol") {
		t.Errorf("the refusal does not name the agent: %v", err)
	}
	if _, ok := keep.people["carol"]; !ok || len(*log) != 1 {
		t.Fatalf("a refused remove wrote: store %v, audit %q", keep.people, *log)
	}

	delete(d.agents, "helper")
	res, err := d.RemovePerson(t.Context(), "owner", params[IDParams](t, `{"id":"carol"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res; got.Folder != "/srv/corral/carol" || !strings.Contains(got.Message, "Their folder was kept, with everything in it: /srv/corral/carol") {
		t.Errorf("person.remove answered %+v", got)
	}
	if _, ok := keep.people["carol"]; ok {
		t.Error("the store still holds carol")
	}
	if (*log)[1] != "owner person.remove carol: folder kept at /srv/corral/carol" {
		t.Errorf("audit: %q", *log)
	}
	_, err = d.RemovePerson(t.Context(), "owner", params[IDParams](t, `{"id":"ann"}`))
	errkind.Want(t, err, errs.Forbidden) // written in config.toml
	_, err = d.RenamePerson(t.Context(), "owner", params[PersonParams](t, `{"id":"ann","name":"Anne"}`))
	errkind.Want(t, err, errs.Forbidden)
}

// A person added again while person.remove forgets them keeps their
// folder: the people cannot change between the directory's entry going
// and the sandbox forgetting the folder. (Forgotten after the directory's
// lock, a person.add in between left a person listed whose agents' every
// call was refused until Corral restarted.)
func TestPersonRemoveRacesNoAdd(t *testing.T) {
	d, _, folders, _ := newPeople(t)
	if _, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Carol"}`)); err != nil {
		t.Fatal(err)
	}
	folders.forgetting = func(id string) {
		folders.forgetting = nil
		if !d.mu.TryLock() {
			return // the people are locked: no call gets in
		}
		d.mu.Unlock()
		if _, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Carol"}`)); err != nil {
			t.Error(err)
		}
	}
	if _, err := d.RemovePerson(t.Context(), "owner", params[IDParams](t, `{"id":"carol"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddPerson(t.Context(), "owner", params[PersonParams](t, `{"name":"Carol"}`)); err != nil && errs.KindOf(err) != errs.Exists {
		t.Fatal(err)
	}
	if _, listed := d.people["carol"]; !listed || !folders.made["carol"] {
		t.Errorf("carol listed %v, her folder known to the sandbox %v", listed, folders.made["carol"])
	}
}

// TestReadOnlyStopsRunningCommands (red team): a command an agent started
// before the owner made it Read-only kept running, and could go on
// writing files (a loop of `touch`), though the level says no writes and
// no commands. set_level read_only now stops the agent's running
// commands, as pausing it does, and says so in its audit row; another
// level stops nothing.
func TestReadOnlyStopsRunningCommands(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.commands["bot"] = 2
	f.log = nil
	if _, err := f.dir.SetLevel(t.Context(), "owner", LevelParams{Name: "bot", Level: "trusted"}); err != nil {
		t.Fatal(err)
	}
	if f.runs.commands["bot"] != 2 {
		t.Errorf("Trusted stopped commands: %v", f.runs.commands)
	}
	if _, err := f.dir.SetLevel(t.Context(), "owner", LevelParams{Name: "bot", Level: "read_only"}); err != nil {
		t.Fatal(err)
	}
	if n := f.runs.commands["bot"]; n != 0 {
		t.Errorf("after read_only, %d commands still running", n)
	}
	if len(f.log) != 2 || !strings.Contains(f.log[1], "2 running command(s) stopped") {
		t.Errorf("audit: %q", f.log)
	}
}

// Load makes live what the store keeps: the people (with their folders)
// and agents added in the dashboard, and what the owner set for the
// agents of config.toml; a name config.toml has too stays the file's.
func TestLoadMakesTheStoresAgentsAndPeopleLive(t *testing.T) {
	keep := newFakeKeeper()
	used := areaClock().Add(-time.Hour)
	keep.people["carol"] = store.Person{ID: "carol", Name: "Carol"}
	keep.people["ann"] = store.Person{ID: "ann", Name: "Ann from the store"}
	keep.agents["bot"] = store.Agent{Name: "bot", User: "carol", Network: "ask", KeySHA256: sha256.Sum256([]byte("corral_bot")), LastUsed: used}
	keep.agents["writer"] = store.Agent{Name: "writer", User: "bob", KeySHA256: sha256.Sum256([]byte("corral_shadow"))}
	keep.configPaused["writer"] = true
	folders := &fakeFolders{made: map[string]bool{}}
	d := New(testConfig(), Options{Store: keep, Folders: folders, Runs: &fakeRuns{}, Now: areaClock})
	if _, ok := d.ByKey(sha256.Sum256([]byte("corral_bot"))); ok || !d.FirstRun() {
		t.Fatal("the store's agent is live before Load")
	}
	if err := d.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c, ok := d.ByKey(sha256.Sum256([]byte("corral_bot"))); !ok || c.Client != "bot" || c.User != "carol" {
		t.Errorf("the store's agent: %+v, %v", c, ok)
	}
	if c, ok := d.ByKey(sha256.Sum256([]byte(writerKey))); !ok || c.User != "ann" || !c.Paused {
		t.Errorf("config.toml's writer: %+v, %v; want ann's folder, paused as the store says", c, ok)
	}
	if _, ok := d.ByKey(sha256.Sum256([]byte("corral_shadow"))); ok {
		t.Error("a store agent shadowed by config.toml lets its key in")
	}
	if ids := d.PersonIDs(); !slices.Equal(ids, []string{"ann", "bob", "carol"}) {
		t.Errorf("people %v", ids)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(folders.made)), []string{"carol"}) {
		t.Errorf("folders made %v, want carol's alone (ann's is config.toml's)", folders.made)
	}
	if d.FirstRun() {
		t.Error("FirstRun with an agent that has worked")
	}
	if err := New(testConfig(), Options{Folders: folders}).Load(t.Context()); err != nil {
		t.Errorf("Load without a store: %v", err)
	}
}

// Reload puts config.toml's new agents and people in place: a key that
// changed or went away ends its connections and commands, a new person
// gets a folder, a person gone loses theirs from the sandbox. A name the
// dashboard already gave changes nothing.
func TestReloadRetiresOldKeysAndPeople(t *testing.T) {
	f := newAgentsFixture(t)
	botKey := f.add(t, `{"name":"bot","user":"ann"}`)
	f.folders.made["bob"] = true
	f.runs.commands["writer"] = 1
	cfg := testConfig()
	cfg.Clients[0].Key = "corral_new_writer_key"
	cfg.Users = []config.User{{ID: "ann", Name: "Ann"}, {ID: "dan", Name: "Dan"}}
	if err := f.dir.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.works(writerKey); ok {
		t.Error("writer's old key still works")
	}
	if who, ok := f.works("corral_new_writer_key"); !ok || who != "writer" {
		t.Errorf("the new key lets in %q (%v)", who, ok)
	}
	if who, ok := f.works(botKey); !ok || who != "bot" {
		t.Error("the dashboard's agent lost its key in a reload")
	}
	if !slices.Equal(f.hung, []string{"writer"}) || f.runs.commands["writer"] != 0 {
		t.Errorf("hung up %v, commands %v; want writer's ended", f.hung, f.runs.commands)
	}
	if !f.folders.made["dan"] || f.folders.made["bob"] || !slices.Equal(f.dir.PersonIDs(), []string{"ann", "dan"}) {
		t.Errorf("folders %v, people %v", f.folders.made, f.dir.PersonIDs())
	}

	// writer gone from config.toml: its questions still waiting are
	// withdrawn too (before the fix they stayed for the owner to allow).
	f.runs.questions["writer"] = 1
	gone := testConfig()
	gone.Clients = nil
	gone.Users = cfg.Users
	if err := f.dir.Reload(gone); err != nil {
		t.Fatal(err)
	}
	if f.runs.questions["writer"] != 0 || f.runs.held["writer"] {
		t.Errorf("the removed writer: questions %v, held %v", f.runs.questions, f.runs.held)
	}
	f.hung = f.hung[:1]
	cfg = testConfig()
	cfg.Clients[0].Key = "corral_new_writer_key"
	cfg.Users = gone.Users
	if err := f.dir.Reload(cfg); err != nil {
		t.Fatal(err)
	}

	// The same file again retires nothing.
	if err := f.dir.Reload(cfg); err != nil || len(f.hung) != 1 {
		t.Errorf("reloading the same file: %v, hung up %v", err, f.hung)
	}
	clash := testConfig()
	clash.Clients = append(clash.Clients, config.Client{Name: "bot", Key: "corral_clash", User: "ann"})
	if err := f.dir.Reload(clash); err == nil || !strings.Contains(err.Error(), `"bot"`) {
		t.Errorf("a config client named like a dashboard agent: %v", err)
	}
	if _, ok := f.works("corral_new_writer_key"); !ok || len(f.hung) != 1 || !slices.Equal(f.dir.PersonIDs(), []string{"ann", "dan"}) {
		t.Error("a refused reload changed the directory")
	}
}

// An agent's last use is written to the store at most once a minute,
// however often it connects; in memory it is always the latest.
func TestTouchWritesTheStoreAtMostOnceAMinute(t *testing.T) {
	now := areaClock()
	keep := newFakeKeeper()
	d := New(testConfig(), Options{Store: keep, Now: func() time.Time { return now }})
	d.Touch(t.Context(), "writer")
	d.Touch(t.Context(), "writer")
	now = now.Add(30 * time.Second)
	d.Touch(t.Context(), "writer")
	if len(keep.touched) != 1 {
		t.Errorf("three touches within a minute wrote %d times", len(keep.touched))
	}
	if got := d.Agents()[0].LastUsed; got == nil || !got.Equal(now) {
		t.Errorf("last used %v, want %v", got, now)
	}
	now = now.Add(31 * time.Second)
	d.Touch(t.Context(), "writer")
	d.Touch(t.Context(), "nobody")
	if !slices.Equal(keep.touched, []string{"writer", "writer"}) {
		t.Errorf("store touched %v", keep.touched)
	}
}
