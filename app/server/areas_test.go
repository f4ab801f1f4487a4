package server

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/app/config"
	"corral/app/pairing"
	"corral/app/sessioninfo"
	"corral/app/sessioninfo/sessioninfotest"
	"corral/core/applypatch"
	"corral/core/audit"
	"corral/core/documents"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/links"
	"corral/core/sandbox"
	"corral/core/testkit/errkind"
	"corral/core/undo"
	"corral/store"
)

// Handler logic of the method areas, against map-backed fakes of the one
// interface each area uses: no database, no sandbox, no sockets. The
// end-to-end tests (approvals_test.go, pairing_test.go) run the same
// methods against the real parts.

// ownerCall is a call from the owner's command line with params.
func ownerCall(params string) *call {
	return &call{caller: ownerCaller, params: json.RawMessage(params)}
}

// wireOf is a result as the client reads it.
func wireOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakePairing is a devicePairing over a map of devices by id; Start
// answers code.
type fakePairing struct {
	devices map[string]store.Device
	code    pairing.Code
	by      []string // who asked for each call
}

func (p *fakePairing) Start(ctx context.Context, by string) (pairing.Code, error) {
	p.by = append(p.by, by)
	return p.code, nil
}

func (p *fakePairing) List(context.Context) ([]store.Device, error) {
	return slices.SortedFunc(maps.Values(p.devices), func(x, y store.Device) int { return strings.Compare(x.ID, y.ID) }), nil
}

func (p *fakePairing) Revoke(ctx context.Context, by, id string) error {
	p.by = append(p.by, by)
	if _, ok := p.devices[id]; !ok {
		return errs.New(errs.NotFound, "", "There is no device %q.", id)
	}
	delete(p.devices, id)
	return nil
}

// auditLines collects what an area records, one "who op target" a line.
type auditLines []string

func (l *auditLines) record(ctx context.Context, who, op, target, detail string) error {
	*l = append(*l, who+" "+op+" "+target)
	return nil
}

// The device methods' wire: app/pairing does the revoking and listing
// (its own tests); the area decodes, passes the caller on and answers.
func TestDeviceAreaRevokeAndList(t *testing.T) {
	paired := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	p := &fakePairing{devices: map[string]store.Device{"d1": {ID: "d1", Name: "phone", Paired: paired}, "d2": {ID: "d2", Name: "tablet", Paired: paired}}}
	d := deviceArea{pair: p}

	res, err := d.revoke(t.Context(), ownerCall(`{"id":"d1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"id":"d1"}` || !slices.Equal(p.by, []string{"owner"}) {
		t.Errorf("result %s, by %v", w, p.by)
	}
	_, err = d.revoke(t.Context(), ownerCall(`{"id":"d1"}`))
	errkind.Want(t, err, errs.NotFound)
	_, err = d.revoke(t.Context(), ownerCall(`{}`))
	errkind.Want(t, err, errs.InvalidParams)

	res, err = d.list(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"devices":[{"id":"d2","name":"tablet","paired":"2026-03-04T05:06:07Z","last_seen":"0001-01-01T00:00:00Z"}]}` {
		t.Errorf("device.list = %s", w)
	}
}

// Without a database device.list is an empty list, not null.
func TestDeviceAreaWithoutDatabase(t *testing.T) {
	d := deviceArea{pair: pairing.New(pairing.Config{HangUp: func(string) { t.Error("hung up without a device") }})}
	res, err := d.list(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"devices":[]}` {
		t.Errorf("device.list = %s, want an empty list", w)
	}
	_, err = d.revoke(t.Context(), ownerCall(`{"id":"d1"}`))
	errkind.Want(t, err, errs.NotFound)
}

func TestDeviceAreaPairingStart(t *testing.T) {
	plus2 := time.FixedZone("+2", 2*3600)
	p := &fakePairing{code: pairing.Code{URL: "https://192.168.1.5:8443/pair?code=123456#sha256=ab", Code: "123456", QR: []string{"101", "010"},
		Expires: time.Date(2026, 3, 4, 7, 0, 0, 0, plus2), Fingerprint: "ab"}}
	d := deviceArea{pair: p}
	res, err := d.pairingStart(t.Context(), &call{caller: sandbox.Caller{Client: "browser", Owner: true}, params: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"123456","expiresAt":"2026-03-04T05:00:00Z","fingerprint":"ab","qr":["101","010"],"url":"https://192.168.1.5:8443/pair?code=123456#sha256=ab"}`
	if w := wireOf(t, res); w != want || !slices.Equal(p.by, []string{"browser"}) {
		t.Errorf("pairing.start by %q = %s, want %s", p.by, w, want)
	}
	_, err = d.pairingStart(t.Context(), ownerCall(`{"x":1}`))
	errkind.Want(t, err, errs.InvalidParams)
}

// fakeLog is an auditFeed over a slice of events.
type fakeLog struct {
	events []audit.Event
	asked  audit.Filter
}

func (l *fakeLog) Query(ctx context.Context, f audit.Filter) (audit.Page, error) {
	l.asked = f
	return audit.Page{Events: l.events}, nil
}

func (l *fakeLog) Stats(ctx context.Context, f audit.Filter, bucket time.Duration) ([]audit.Bucket, error) {
	l.asked = f
	return nil, nil
}

func (l *fakeLog) Subscribe() (<-chan audit.Event, func()) { return nil, func() {} }

func TestAuditAreaFilters(t *testing.T) {
	log := &fakeLog{}
	a := auditArea{log: log}
	res, err := a.query(t.Context(), ownerCall(`{"agent":"bot","since":"2026-01-02T15:04:05Z","decision":"deny"}`))
	if err != nil {
		t.Fatal(err)
	}
	if log.asked.Agent != "bot" || log.asked.Decision != audit.Deny || !log.asked.Since.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)) {
		t.Errorf("the store was asked %+v", log.asked)
	}
	if w := wireOf(t, res); !strings.Contains(w, `"events":[]`) {
		t.Errorf("no events: %s, want an empty list, not null", w)
	}
	res, err = a.stats(t.Context(), ownerCall(`{"bucket":"day"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"buckets":[]}` {
		t.Errorf("audit.stats = %s", w)
	}
	for _, tc := range []struct {
		fn     func(context.Context, *call) (any, error)
		params string
	}{
		{a.query, `{"bucket":"day"}`},
		{a.query, `{"since":"yesterday"}`},
		{a.query, `{"decision":"maybe"}`},
		{a.query, `{"ops":[]}`},
		{a.query, `{"limit":-1}`},
		{a.stats, `{"bucket":"week"}`},
	} {
		_, err := tc.fn(t.Context(), ownerCall(tc.params))
		errkind.Want(t, err, errs.InvalidParams)
	}
}

// fakeFiles is a fileOps over a map of entries by path; it answers
// file.stat and nothing else (any other method would reach the nil
// sandbox and panic).
type fakeFiles struct {
	*sandbox.Sandbox
	entries map[string]fsbox.Info
	asked   []sandbox.StatArgs
	callers []string
}

func (f *fakeFiles) Stat(ctx context.Context, c sandbox.Caller, a sandbox.StatArgs) (fsbox.Info, error) {
	f.asked, f.callers = append(f.asked, a), append(f.callers, c.Client)
	info, ok := f.entries[a.Path]
	if !ok {
		return fsbox.Info{}, errs.New(errs.NotFound, "", "There is no %s.", a.Path)
	}
	return info, nil
}

func TestFileAreaDecodesArgsAndEncodesTheResult(t *testing.T) {
	when := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
	box := &fakeFiles{entries: map[string]fsbox.Info{"d/a": {Name: "a", Path: "d/a", Type: "file", Size: 4, Modified: when}}}
	table := map[string]method{}
	fileArea{box: box, patches: (*applypatch.Service)(nil), docs: (*documents.Service)(nil), undo: (*undo.Service)(nil)}.methods(func(name string, m method) { table[name] = m })
	if !table["undo.apply"].owner || table["file.stat"].owner {
		t.Errorf("owner-only: undo.apply %v, file.stat %v", table["undo.apply"].owner, table["file.stat"].owner)
	}
	agent := &call{caller: sandbox.Caller{Client: "bot"}, params: json.RawMessage(`{"path":"d/a","reason":"to look"}`)}
	got, err := table["file.stat"].fn(t.Context(), agent)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"a","path":"d/a","type":"file","size":4,"modified":"2026-11-25T09:30:00Z"}`; wireOf(t, got) != want {
		t.Errorf("file.stat answered %s, want %s", wireOf(t, got), want)
	}
	if len(box.asked) != 1 || box.asked[0].Path != "d/a" || box.asked[0].Reason != "to look" || box.callers[0] != "bot" {
		t.Errorf("the sandbox was asked %+v by %v", box.asked, box.callers)
	}
	agent.params = json.RawMessage(`{"path":"d/none"}`)
	_, err = table["file.stat"].fn(t.Context(), agent)
	errkind.Want(t, err, errs.NotFound)
	agent.params = json.RawMessage(`{"path":["d/a"]}`)
	_, err = table["file.stat"].fn(t.Context(), agent)
	errkind.Want(t, err, errs.InvalidParams)
	if len(box.asked) != 2 {
		t.Errorf("a call with bad params reached the sandbox: %+v", box.asked)
	}
}

// The session rows: session.info reaches app/sessioninfo with the
// caller (its own tests say what each caller is told); session.login is
// the owner's, recorded before its answer.
func TestSessionAreaRows(t *testing.T) {
	var recorded []string
	x := sessionArea{Session: sessioninfo.Session{Box: sessioninfotest.Box{}, People: func() []string { return []string{"ann"} }},
		record: func(ctx context.Context, who, op, target, detail string) error {
			recorded = append(recorded, who+" "+op)
			return nil
		},
		loginURL: func() (string, time.Time) {
			return "http://127.0.0.1:1/login?t=x", time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		},
	}
	table := map[string]method{}
	x.methods(func(name string, m method) { table[name] = m })
	got, err := table["session.info"].fn(t.Context(), &call{caller: sandbox.Caller{Client: "bot", User: "ann"}, params: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if agent := got.(sessionInfo); agent.Role != "client" || agent.Client != "bot" || agent.Scope != "ann" {
		t.Errorf("an agent was told %+v", agent)
	}
	_, err = table["session.info"].fn(t.Context(), ownerCall(`{"x":1}`))
	errkind.Want(t, err, errs.InvalidParams)
	if table["session.info"].owner || !table["session.login"].owner {
		t.Error("session.info is the owner's, or session.login is open to agents")
	}
	got, err = table["session.login"].fn(t.Context(), ownerCall(`{}`))
	if w := wireOf(t, got); err != nil || w != `{"expiresAt":"2026-11-25T10:00:00Z","url":"http://127.0.0.1:1/login?t=x"}` || !slices.Equal(recorded, []string{"owner session.login"}) {
		t.Errorf("session.login: %s, %v, recorded %v", w, err, recorded)
	}
}

// fakeMaker is a share.Maker that records what it was asked to sign.
type fakeMaker struct{ made []links.LinkArgs }

func (f *fakeMaker) CreateLink(ctx context.Context, c sandbox.Caller, a links.LinkArgs) (links.Link, error) {
	f.made = append(f.made, a)
	return links.Link{Path: a.Path, Token: "t"}, nil
}

func (f *fakeMaker) SaveResult(ctx context.Context, c sandbox.Caller, a links.ResultArgs) (links.Result, error) {
	return links.Result{}, errs.New(errs.Unavailable, "", "Not here.")
}

// The share room's rows (app/share answers them): link.create's lifetime
// is read as the caller wrote it, and the owner's methods are the owner's.
func TestLinkAreaRows(t *testing.T) {
	box := &fakeMaker{}
	table := map[string]method{}
	x := (&Server{cfg: &config.Config{}}).linkArea()
	x.Box = box
	x.methods(func(n string, m method) { table[n] = m })
	if _, err := table["link.create"].fn(t.Context(), ownerCall(`{"path":"/home/ann/a.txt","expires_in":"1h"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := table["link.create"].fn(t.Context(), ownerCall(`{"path":"a","expires_in":"soon"}`)); errs.KindOf(err) != errs.InvalidParams {
		t.Errorf("expires_in soon: %v", err)
	}
	if len(box.made) != 1 || box.made[0].ExpiresIn != time.Hour || box.made[0].Path != "/home/ann/a.txt" {
		t.Errorf("links asked for: %+v", box.made)
	}
	for name, owner := range map[string]bool{"link.create": false, "result.save": false, "links.rotate": true, "links.list": true, "link.revoke": true} {
		if table[name].fn == nil || table[name].owner != owner {
			t.Errorf("%s: registered %v, owner only %v", name, table[name].fn != nil, table[name].owner)
		}
	}
}
