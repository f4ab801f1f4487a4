package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/app/config"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/testkit/errkind"
	"corral/store"
)

// The agent, person, connect and config areas against fakes of what they
// write: the store (fakeKeeper), the sandbox's commands and questions
// (fakeRuns) and folders (fakeFolders), the connections (a hang-up func).
// The live directory is the real one, in memory: it is what the server
// authenticates bearer keys against, so these tests ask it whether a key
// works. TestAgentsAtRuntime runs the same methods against SQLite,
// bubblewrap and real connections.

// fakeKeeper is an agentKeeper and personKeeper over maps: what the store
// holds.
type fakeKeeper struct {
	agents       map[string]store.Agent
	people       map[string]store.Person
	configPaused map[string]bool // pauses of agents written in config.toml
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

// fakeRuns is agentRuns over the number of commands each agent has
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

// auditDetails collects what an area records, one "who op target: detail"
// a line.
type auditDetails []string

func (l *auditDetails) record(ctx context.Context, who, op, target, detail string) error {
	*l = append(*l, who+" "+op+" "+target+": "+detail)
	return nil
}

var areaClock = func() time.Time { return time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC) }

// agentsFixture is a directory with ann and bob in config.toml, the agent
// "writer" there too, and an agent area over it.
type agentsFixture struct {
	dir  *directory
	keep *fakeKeeper
	runs *fakeRuns
	hung []string
	log  auditDetails
	x    agentArea
}

const writerKey = "corral_writer_key_from_config"

func newAgentsFixture(t *testing.T) *agentsFixture {
	t.Helper()
	f := &agentsFixture{dir: newDirectory(), keep: newFakeKeeper(),
		runs: &fakeRuns{commands: map[string]int{}, questions: map[string]int{}, held: map[string]bool{}}}
	cfg := &config.Config{Path: "/home/owner/.config/corral/config.toml",
		Users:   []config.User{{ID: "ann", Name: "Ann"}, {ID: "bob", Name: "Bob"}},
		Clients: []config.Client{{Name: "writer", Key: writerKey, User: "ann"}}}
	if err := f.dir.setConfig(cfg, nil); err != nil {
		t.Fatal(err)
	}
	f.x = agentArea{dir: f.dir, keep: f.keep, runs: f.runs, cfgFile: cfg.Path, now: areaClock, record: f.log.record,
		hangUp: func(agent string) int { f.hung = append(f.hung, agent); return 2 }}
	return f
}

// add adds an agent through agent.add and returns its key.
func (f *agentsFixture) add(t *testing.T, params string) string {
	t.Helper()
	res, err := f.x.add(t.Context(), ownerCall(params))
	if err != nil {
		t.Fatal(err)
	}
	return res.(agentKeyResult).Key
}

// works says whether the directory lets key in, and as whom.
func (f *agentsFixture) works(key string) (string, bool) {
	c, ok := f.dir.byKey(sha256.Sum256([]byte(key)))
	return c.Client, ok
}

func TestAgentAreaAddGivesAKeyThatWorksAtOnce(t *testing.T) {
	f := newAgentsFixture(t)
	res, err := f.x.add(t.Context(), ownerCall(`{"name":" bot ","user":"ann","act_for":["bob"],"network":"off"}`))
	if err != nil {
		t.Fatal(err)
	}
	added := res.(agentKeyResult)
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

func TestAgentAreaAddWithATakenNameIsRefusedAndWritesNothing(t *testing.T) {
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
		_, err := f.x.add(t.Context(), ownerCall(tc.params))
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.params, err, tc.kind)
		}
	}
	if len(f.keep.agents) != 1 || f.keep.agents["bot"].User != before.User || len(f.log) != 0 {
		t.Errorf("refused adds wrote: store %+v, audit %q", f.keep.agents, f.log)
	}
	if _, ok := f.dir.current("new"); ok {
		t.Error("a refused agent is in the directory")
	}
	if c, _ := f.dir.current("writer"); c.User != "ann" {
		t.Errorf("the config agent became %+v", c)
	}
}

func TestAgentAreaRemoveEndsItsKeyConnectionsAndCommands(t *testing.T) {
	f := newAgentsFixture(t)
	key := f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.commands["bot"] = 1
	f.log = nil

	res, err := f.x.remove(t.Context(), ownerCall(`{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"connections_closed":2,"name":"bot","removed":true}` {
		t.Errorf("agent.remove answered %s", w)
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
	if held, ok := f.runs.held["bot"]; !ok || held {
		t.Error("a later agent called bot would find its questions still held")
	}
	if !slices.Equal(f.log, auditDetails{"owner agent.remove bot: its key stopped working; 2 connection(s) closed, 1 running command(s) stopped"}) {
		t.Errorf("audit: %q", f.log)
	}

	// An agent written in config.toml is removed there; nothing is hung up.
	_, err = f.x.remove(t.Context(), ownerCall(`{"name":"writer"}`))
	errkind.Want(t, err, errs.Forbidden)
	if !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("the refusal does not say where to change it: %v", err)
	}
	_, err = f.x.remove(t.Context(), ownerCall(`{"name":"bot"}`))
	errkind.Want(t, err, errs.NotFound)
	if len(f.hung) != 1 || len(f.log) != 1 {
		t.Errorf("refused removes hung up %v, recorded %q", f.hung, f.log)
	}
	if _, ok := f.works(writerKey); !ok {
		t.Error("the config agent's key stopped working")
	}
}

func TestAgentAreaRotateKeyRetiresTheOldKey(t *testing.T) {
	f := newAgentsFixture(t)
	old := f.add(t, `{"name":"bot","user":"ann"}`)
	res, err := f.x.rotateKey(t.Context(), ownerCall(`{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	key := res.(agentKeyResult).Key
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
	_, err = f.x.rotateKey(t.Context(), ownerCall(`{"name":"writer"}`))
	errkind.Want(t, err, errs.Forbidden)
	if _, ok := f.works(writerKey); !ok || len(f.hung) != 1 {
		t.Errorf("a refused rotate changed the config agent's key or hung up %v", f.hung)
	}
}

func TestAgentAreaPauseAndResume(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"ann"}`)
	f.runs.commands["bot"], f.runs.questions["bot"] = 2, 1
	f.log = nil

	res, err := f.x.setPaused(true)(t.Context(), ownerCall(`{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); !strings.Contains(w, `"paused":true`) {
		t.Errorf("agent.pause answered %s", w)
	}
	if c, _ := f.dir.current("bot"); !c.Paused || !f.keep.agents["bot"].Paused || !f.runs.held["bot"] {
		t.Errorf("paused: directory %v, store %v, questions held %v", c.Paused, f.keep.agents["bot"].Paused, f.runs.held["bot"])
	}
	if _, err := f.x.setPaused(false)(t.Context(), ownerCall(`{"name":"bot"}`)); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.dir.current("bot"); c.Paused || f.keep.agents["bot"].Paused || f.runs.held["bot"] {
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
	if _, err := f.x.setPaused(true)(t.Context(), ownerCall(`{"name":"writer"}`)); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.dir.current("writer"); !c.Paused || !f.keep.configPaused["writer"] {
		t.Errorf("config agent: paused %v, stored %v", c.Paused, f.keep.configPaused)
	}
	_, err = f.x.setPaused(true)(t.Context(), ownerCall(`{"name":"nobody"}`))
	errkind.Want(t, err, errs.NotFound)
}

func TestAgentAreaListsConfigAgentsFirst(t *testing.T) {
	f := newAgentsFixture(t)
	f.add(t, `{"name":"bot","user":"bob"}`)
	res, err := f.x.clientList(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"clients":[{"name":"writer","user":"ann","act_for":[]},{"name":"bot","user":"bob","act_for":[]}]}` {
		t.Errorf("client.list = %s", w)
	}
	res, err = f.x.list(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); !strings.HasPrefix(w, `{"agents":[{"name":"writer",`) || !strings.HasSuffix(w, `"managed":true}`) {
		t.Errorf("agent.list = %s", w)
	}
}

func TestAgentAreaWithoutDatabase(t *testing.T) {
	f := newAgentsFixture(t)
	f.x.keep = nil
	res, err := f.x.list(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); !strings.HasSuffix(w, `"managed":false}`) {
		t.Errorf("agent.list = %s, want it to say agents cannot be managed", w)
	}
	for _, tc := range []struct {
		fn     func(context.Context, *call) (any, error)
		params string
	}{
		{f.x.add, `{"name":"bot","user":"ann"}`}, {f.x.update, `{"name":"bot","user":"ann"}`},
		{f.x.rotateKey, `{"name":"bot"}`}, {f.x.setPaused(true), `{"name":"writer"}`}, {f.x.remove, `{"name":"bot"}`},
	} {
		_, err := tc.fn(t.Context(), ownerCall(tc.params))
		errkind.Want(t, err, errs.Unavailable)
		if !strings.Contains(err.Error(), "no database") {
			t.Errorf("%s: %v", tc.params, err)
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

func newPersonArea(t *testing.T) (personArea, *fakeKeeper, *fakeFolders, *auditDetails) {
	f := newAgentsFixture(t)
	folders := &fakeFolders{made: map[string]bool{}}
	log := &auditDetails{}
	return personArea{dir: f.dir, keep: f.keep, folders: folders, cfgFile: f.x.cfgFile, now: areaClock, record: log.record}, f.keep, folders, log
}

func TestPersonAreaAddMakesTheirFolder(t *testing.T) {
	x, keep, folders, log := newPersonArea(t)
	res, err := x.add(t.Context(), ownerCall(`{"name":"Ana María"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"person":{"id":"ana-mar-a","name":"Ana María","from_config":false,"folder":"/srv/corral/ana-mar-a","agents":[]}}` {
		t.Errorf("person.add answered %s", w)
	}
	if !folders.made["ana-mar-a"] || keep.people["ana-mar-a"].Name != "Ana María" || len(*log) != 1 {
		t.Errorf("folders %v, store %v, audit %q", folders.made, keep.people, *log)
	}
	for _, params := range []string{
		`{"name":"Ann"}`, // her folder name "ann" is config.toml's Ann's
		`{"name":"Ana María"}`,
	} {
		_, err := x.add(t.Context(), ownerCall(params))
		errkind.Want(t, err, errs.Exists)
	}
	for _, params := range []string{`{"name":"Shared","id":"SHARE"}`, `{"name":"C","id":"companion"}`, `{"name":"   "}`, `{"name":"a\u200bb"}`} {
		_, err := x.add(t.Context(), ownerCall(params))
		errkind.Want(t, err, errs.InvalidParams)
	}
	if len(keep.people) != 1 || len(folders.made) != 1 || len(*log) != 1 {
		t.Errorf("refused adds wrote: store %v, folders %v, audit %q", keep.people, folders.made, *log)
	}

	// A folder that cannot be made undoes the store's write.
	folders.broken = true
	_, err = x.add(t.Context(), ownerCall(`{"name":"Carol"}`))
	errkind.Want(t, err, errs.IO)
	if _, ok := keep.people["carol"]; ok {
		t.Error("a person without a folder stayed in the store")
	}
}

func TestPersonAreaRemoveKeepsTheFolder(t *testing.T) {
	x, keep, _, log := newPersonArea(t)
	if _, err := x.add(t.Context(), ownerCall(`{"name":"Carol"}`)); err != nil {
		t.Fatal(err)
	}
	x.dir.agents["helper"] = &liveAgent{Agent: store.Agent{Name: "helper", User: "ann", ActFor: []string{"carol"}}}
	_, err := x.remove(t.Context(), ownerCall(`{"id":"carol"}`))
	errkind.Want(t, err, errs.Conflict)
	if err == nil || !strings.Contains(err.Error(), "helper still works for carol") {
		t.Errorf("the refusal does not name the agent: %v", err)
	}
	if _, ok := keep.people["carol"]; !ok || len(*log) != 1 {
		t.Fatalf("a refused remove wrote: store %v, audit %q", keep.people, *log)
	}

	delete(x.dir.agents, "helper")
	res, err := x.remove(t.Context(), ownerCall(`{"id":"carol"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got personRemovedResult
	if err := json.Unmarshal([]byte(wireOf(t, res)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Folder != "/srv/corral/carol" || !got.Kept || !strings.Contains(got.Message, "Their folder was kept, with everything in it: /srv/corral/carol") {
		t.Errorf("person.remove answered %+v", got)
	}
	if _, ok := keep.people["carol"]; ok {
		t.Error("the store still holds carol")
	}
	if (*log)[1] != "owner person.remove carol: folder kept at /srv/corral/carol" {
		t.Errorf("audit: %q", *log)
	}
	_, err = x.remove(t.Context(), ownerCall(`{"id":"ann"}`))
	errkind.Want(t, err, errs.Forbidden) // written in config.toml
	_, err = x.rename(t.Context(), ownerCall(`{"id":"ann","name":"Anne"}`))
	errkind.Want(t, err, errs.Forbidden)
}

// A person added again while person.remove forgets them keeps their
// folder: the people cannot change between the directory's entry going
// and the sandbox forgetting the folder. (Forgotten after the directory's
// lock, a person.add in between left a person listed whose agents' every
// call was refused until Corral restarted.)
func TestPersonAreaRemoveRacesNoAdd(t *testing.T) {
	x, _, folders, _ := newPersonArea(t)
	if _, err := x.add(t.Context(), ownerCall(`{"name":"Carol"}`)); err != nil {
		t.Fatal(err)
	}
	folders.forgetting = func(id string) {
		folders.forgetting = nil
		if !x.dir.mu.TryLock() {
			return // the people are locked: no call gets in
		}
		x.dir.mu.Unlock()
		if _, err := x.add(t.Context(), ownerCall(`{"name":"Carol"}`)); err != nil {
			t.Error(err)
		}
	}
	if _, err := x.remove(t.Context(), ownerCall(`{"id":"carol"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := x.add(t.Context(), ownerCall(`{"name":"Carol"}`)); err != nil && errs.KindOf(err) != errs.Exists {
		t.Fatal(err)
	}
	if _, listed := x.dir.people["carol"]; !listed || !folders.made["carol"] {
		t.Errorf("carol listed %v, her folder known to the sandbox %v", listed, folders.made["carol"])
	}
}

// connectHome is an owner's home with Cursor's config file holding one
// other server.
func connectHome(t *testing.T) (home, file string, before []byte) {
	home = t.TempDir()
	file = filepath.Join(home, ".cursor", "mcp.json")
	before = []byte(`{"mcpServers":{"other":{"command":"other"}}}`)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	return home, file, before
}

func TestConnectAreaPreviewWritesNothingWriteDoes(t *testing.T) {
	home, file, before := connectHome(t)
	key := "corral_bot_key"
	var log auditDetails
	x := connectArea{home: home, command: "/usr/bin/corral", url: func() string { return "http://127.0.0.1:8765" }, now: areaClock, record: log.record,
		keyOf: func(agent string) ([32]byte, bool) { return sha256.Sum256([]byte(key)), agent == "bot" }}

	res, err := x.preview(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan := res.(connectPlan)
	if plan.Path != file || plan.Written || !strings.Contains(plan.Diff, "+") || !strings.Contains(plan.Diff, key) {
		t.Errorf("preview: %+v", plan)
	}
	if now, _ := os.ReadFile(file); string(now) != string(before) || len(log) != 0 {
		t.Fatalf("the preview changed the file to %s or recorded %q", now, log)
	}

	// A write against a digest the file no longer has is refused.
	_, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`","digest":"00"}`))
	errkind.Want(t, err, errs.Conflict)
	if now, _ := os.ReadFile(file); string(now) != string(before) {
		t.Fatal("a refused write changed the file")
	}

	res, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`","digest":"`+plan.Digest+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	wrote := res.(connectPlan)
	now, _ := os.ReadFile(file)
	kept, _ := os.ReadFile(wrote.Backup)
	if !wrote.Written || !strings.Contains(string(now), key) || !strings.Contains(string(now), `"other"`) || string(kept) != string(before) {
		t.Errorf("write: %+v; file %s; backup %s", wrote, now, kept)
	}
	if wrote.Backup != file+".corral-backup-20261125-093000.000" || len(log) != 1 || !strings.HasPrefix(log[0], "owner agent.connect bot: wrote bot into "+file) {
		t.Errorf("backup %s, audit %q", wrote.Backup, log)
	}

	for _, tc := range []struct {
		params string
		kind   errs.Kind
	}{
		{`{"name":"bot","app":"cursor","key":"corral_wrong"}`, errs.InvalidParams},
		{`{"name":"bot","app":"cursor"}`, errs.InvalidParams}, // writing needs the key
		{`{"name":"nobody","app":"cursor","key":"` + key + `"}`, errs.NotFound},
		{`{"name":"bot","app":"goose","key":"` + key + `"}`, errs.Unavailable}, // shown, never written
	} {
		_, err := x.preview(t.Context(), ownerCall(tc.params))
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.params, err, tc.kind)
		}
	}
}

func TestConnectAreaShowsTheAppsWithoutAKey(t *testing.T) {
	home, file, _ := connectHome(t)
	x := connectArea{home: home, command: "/usr/bin/corral", url: func() string { return "http://127.0.0.1:8765" },
		keyOf: func(agent string) ([32]byte, bool) { return [32]byte{1}, agent == "bot" }}
	res, err := x.show(t.Context(), ownerCall(`{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := res.(connectResult)
	if r.HasKey || r.URL != "http://127.0.0.1:8765" || r.Command != "/usr/bin/corral" {
		t.Errorf("agent.connect: %+v", r)
	}
	for _, app := range r.Apps {
		if app.ID == "cursor" && (app.Path != file || !app.Exists || app.Writable || !strings.Contains(app.Snippet, keyPlaceholder)) {
			t.Errorf("cursor without the key: %+v", app)
		}
	}
	_, err = x.show(t.Context(), ownerCall(`{"name":"nobody"}`))
	errkind.Want(t, err, errs.NotFound)
}

func TestConfigAreaReportsTheStatus(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	x := configArea{status: func() configStatusResult {
		return configStatusResult{Path: "/c/config.toml", Problem: "line 3: expected '='", RestartNeeded: []string{"server"}, ReloadedAt: &at}
	}}
	table := map[string]method{}
	x.methods(func(name string, m method) { table[name] = m })
	if !table["config.status"].owner {
		t.Error("config.status is open to agents")
	}
	res, err := table["config.status"].fn(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"path":"/c/config.toml","problem":"line 3: expected '='","restart_needed":["server"],"reloaded_at":"2026-11-25T09:00:00Z"}` {
		t.Errorf("config.status = %s", w)
	}
	_, err = table["config.status"].fn(t.Context(), ownerCall(`{"x":1}`))
	errkind.Want(t, err, errs.InvalidParams)
}
