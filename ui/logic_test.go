package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/policy"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func fileApproval(id string, at time.Time) policy.Approval {
	return policy.Approval{
		ID: id, Client: "alice-agent", User: "alice", Access: policy.Write, Target: "/home/alice/notes/todo.txt",
		Folder: "/home/alice/notes", RequestedAt: at, ExpiresAt: at.Add(2 * time.Minute),
	}
}

func TestPromptChoices(t *testing.T) {
	labels := func(cs []policy.Choice) (out []string) {
		for _, c := range cs {
			out = append(out, string(c.Decision)+"="+c.Label)
		}
		return out
	}
	normal := prompt{a: fileApproval("ap_1", t0)}
	want := []string{"allow_once=Allow once", "allow_session=Allow until restart", "allow_always=Always allow", "deny_once=Deny", "deny_always=Always deny"}
	if got := labels(normal.choices()); !slices.Equal(got, want) {
		t.Errorf("normal choices = %q, want %q", got, want)
	}
	if !normal.remembers() || !normal.canWiden() || normal.folder() != "/home/alice/notes" {
		t.Errorf("normal: remembers %v, canWiden %v, folder %q", normal.remembers(), normal.canWiden(), normal.folder())
	}

	guarded := prompt{a: fileApproval("ap_3", t0)}
	guarded.a.Folder = "" // the policy offers no folder: the home folder, Corral's files or "/"
	if guarded.canWiden() {
		t.Error("a folder the policy did not offer can be chosen")
	}

	network := prompt{a: policy.Approval{ID: "ap_2", Access: policy.Network, Target: "curl example.org", OneTimeOnly: true}}
	want = []string{"allow_once=Allow once", "deny_once=Deny"}
	if got := labels(network.choices()); !slices.Equal(got, want) {
		t.Errorf("one-time-only choices = %q, want %q", got, want)
	}
	if network.remembers() || network.canWiden() {
		t.Error("a one-time-only approval offers remembering or widening")
	}
	// The buttons offered are exactly what the broker accepts.
	for _, p := range []prompt{normal, network} {
		var ds []policy.Decision
		for _, c := range p.choices() {
			ds = append(ds, c.Decision)
		}
		if !slices.Equal(ds, p.a.Decisions()) {
			t.Errorf("%s: buttons %v, broker accepts %v", p.a.ID, ds, p.a.Decisions())
		}
	}
	// Commands that are not one-time-only can become rules but not folders.
	cmd := prompt{a: policy.Approval{Access: policy.Execute, Target: "make test"}}
	if cmd.canWiden() {
		t.Error("a command can be widened to a folder")
	}
}

func TestPromptAnswer(t *testing.T) {
	p := prompt{a: fileApproval("ap_1", t0), shown: t0}
	week := 7 * 24 * time.Hour
	tests := []struct {
		name  string
		at    time.Duration // after shown
		d     policy.Decision
		widen bool
		exp   time.Duration
		want  policy.Answer
		err   error
	}{
		{"inside the guard", 749 * time.Millisecond, policy.AllowOnce, false, 0, policy.Answer{}, errTooSoon},
		{"at once", 0, policy.DenyOnce, false, 0, policy.Answer{}, errTooSoon},
		{"guard passed", GuardDelay, policy.AllowOnce, false, 0, policy.Answer{ID: "ap_1", Decision: policy.AllowOnce, By: "tray", Via: "dialog"}, nil},
		{"once ignores folder and expiry", time.Second, policy.AllowOnce, true, week, policy.Answer{ID: "ap_1", Decision: policy.AllowOnce, By: "tray", Via: "dialog"}, nil},
		{"session takes folder, not expiry", time.Second, policy.AllowSession, true, week, policy.Answer{ID: "ap_1", Decision: policy.AllowSession, Widen: "folder", By: "tray", Via: "dialog"}, nil},
		{"always takes both", time.Second, policy.AllowAlways, true, week, policy.Answer{ID: "ap_1", Decision: policy.AllowAlways, Widen: "folder", ExpiresIn: week, By: "tray", Via: "dialog"}, nil},
		{"deny always forever", time.Second, policy.DenyAlways, false, 0, policy.Answer{ID: "ap_1", Decision: policy.DenyAlways, By: "tray", Via: "dialog"}, nil},
		{"deny once", time.Second, policy.DenyOnce, true, week, policy.Answer{ID: "ap_1", Decision: policy.DenyOnce, By: "tray", Via: "dialog"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.answer(t0.Add(tt.at), tt.d, tt.widen, tt.exp)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("answer = %+v, %v; want %+v, %v", got, err, tt.want, tt.err)
			}
		})
	}

	once := prompt{a: policy.Approval{ID: "ap_n", Access: policy.Network, OneTimeOnly: true}, shown: t0}
	for _, d := range []policy.Decision{policy.AllowSession, policy.AllowAlways, policy.DenyAlways} {
		if _, err := once.answer(t0.Add(time.Second), d, false, 0); !errors.Is(err, errNotAccepted) {
			t.Errorf("one-time-only %s: err %v", d, err)
		}
	}
}

func TestPromptCountdown(t *testing.T) {
	p := prompt{a: fileApproval("ap_1", t0)}
	for _, tt := range []struct {
		at   time.Duration
		text string
		frac float64
	}{
		{0, "Denied automatically in 2:00 unless you answer.", 1},
		{6 * time.Second, "Denied automatically in 1:54 unless you answer.", 0.95},
		{time.Minute, "Denied automatically in 1:00 unless you answer.", 0.5},
		{2 * time.Minute, "Time is up: the request is being denied.", 0},
		{3 * time.Minute, "Time is up: the request is being denied.", 0},
	} {
		if got := p.countdown(t0.Add(tt.at)); got != tt.text {
			t.Errorf("countdown at %v = %q, want %q", tt.at, got, tt.text)
		}
		if got := p.progress(t0.Add(tt.at)); got < tt.frac-0.001 || got > tt.frac+0.001 {
			t.Errorf("progress at %v = %v, want %v", tt.at, got, tt.frac)
		}
	}
	if got := (prompt{a: policy.Approval{Client: "c", User: "u"}}).why(); got != "The agent gave no reason." {
		t.Errorf("why without a reason: %q", got)
	}
}

func TestQueue(t *testing.T) {
	var q queue
	if _, ok := q.shown(); ok || q.position() != "" {
		t.Fatal("an empty queue shows something")
	}
	b, a, c := fileApproval("b", t0.Add(time.Second)), fileApproval("a", t0), fileApproval("c", t0.Add(2*time.Second))
	if !q.add(b) || q.add(b) {
		t.Fatal("add: first should be new, second a duplicate")
	}
	if cur, _ := q.shown(); cur.ID != "b" || q.position() != "" {
		t.Fatalf("shown %q position %q", cur.ID, q.position())
	}
	// An older request arriving later (a surface's replay) is queued in
	// order, but what is on screen does not change under the cursor.
	q.add(c)
	q.add(a)
	if cur, _ := q.shown(); cur.ID != "b" || q.position() != "2 of 3" {
		t.Fatalf("after adds: shown %q position %q", cur.ID, q.position())
	}
	ids := func() (out []string) {
		for _, x := range q.list() {
			out = append(out, x.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("order %v", got)
	}
	if q.remove("zzz") || q.remove("c") {
		t.Fatal("removing an unknown or a not-shown approval reported the shown one")
	}
	if !q.remove("b") {
		t.Fatal("removing the shown approval was not reported")
	}
	if cur, _ := q.shown(); cur.ID != "a" || q.position() != "" {
		t.Fatalf("after removing the shown one: %q %q (want the oldest)", cur.ID, q.position())
	}
	q.add(c)
	if !q.choose("c") || q.choose("nope") {
		t.Fatal("choose")
	}
	if cur, _ := q.shown(); cur.ID != "c" || q.position() != "2 of 2" {
		t.Fatalf("chosen: %q %q", cur.ID, q.position())
	}
	q.remove("c")
	q.remove("a")
	if _, ok := q.shown(); ok || q.len() != 0 {
		t.Fatal("queue not empty")
	}
}

func TestMenuModel(t *testing.T) {
	labels := func(items []menuItem) (out []string) {
		for _, it := range items {
			if it.Separator {
				out = append(out, "---")
				continue
			}
			if it.Hidden {
				continue
			}
			l := it.Label
			if it.Disabled {
				l = "(" + l + ")"
			}
			out = append(out, l)
		}
		return out
	}
	st := Status{Listen: "http://127.0.0.1:8765", Agents: 1}
	got := labels(menuModel(st, nil, false))
	want := []string{"(127.0.0.1:8765 · 1 agent connected · running)", "---", "(No approvals pending)", "---",
		"Open dashboard", "Connect an agent…", "Pause agents", "Recent activity…", "Settings…", "---", "Quit"}
	if !slices.Equal(got, want) {
		t.Errorf("idle menu\n got %q\nwant %q", got, want)
	}

	st = Status{Listen: "http://127.0.0.1:8765", Agents: 3, Paused: true}
	pending := []policy.Approval{fileApproval("ap_1", t0), {ID: "ap_2", Description: "bob-agent wants network access for: " + strings.Repeat("x", 100)}}
	items := menuModel(st, pending, true)
	got = labels(items)
	want = []string{"(127.0.0.1:8765 · 3 agents connected · paused)", "---", "Approvals pending (2)", "---",
		"Open dashboard", "Connect an agent…", "Resume agents", "Recent activity…", "Pair a phone…", "Settings…", "---", "Quit"}
	if !slices.Equal(got, want) {
		t.Errorf("busy menu\n got %q\nwant %q", got, want)
	}
	if items[2].Label != labelNoPending || !items[2].Hidden || items[3].Hidden {
		t.Fatalf("with requests pending, the pending submenu should show instead of %q: %+v", labelNoPending, items[2:4])
	}
	sub := items[3].Children
	if len(sub) != 2 || sub[0].Action != actApproval || sub[0].ID != "ap_1" || sub[1].ID != "ap_2" {
		t.Fatalf("pending submenu %+v", sub)
	}
	if sub[0].Label != "alice-agent wants to write /home/alice/notes/todo.txt" || len([]rune(sub[1].Label)) != 70 || !strings.HasSuffix(sub[1].Label, "…") {
		t.Errorf("pending labels %q, %q", sub[0].Label, sub[1].Label)
	}
	if last := items[len(items)-1]; last.Action != actQuit {
		t.Errorf("last item %+v", last)
	}
}

func TestBadge(t *testing.T) {
	for _, tt := range []struct {
		paused  bool
		pending int
		want    badge
	}{
		{false, 0, badgeNone}, {true, 0, badgePaused}, {false, 2, badgePending}, {true, 1, badgePending},
	} {
		if got := badgeFor(Status{Paused: tt.paused}, tt.pending); got != tt.want {
			t.Errorf("badgeFor(paused %v, pending %d) = %v, want %v", tt.paused, tt.pending, got, tt.want)
		}
	}
}

func TestActivityModel(t *testing.T) {
	ev := func(id int64) audit.Event {
		return audit.Event{ID: id, Time: t0.Add(time.Duration(id) * time.Second), Client: "alice-agent", Op: "file.read",
			Target: fmt.Sprintf("/tmp/f%d", id), Decision: audit.Deny, DecidedBy: audit.ByStrict}
	}
	var a activity
	page := []audit.Event{ev(3), ev(2), ev(1)} // newest first, as audit.Query answers
	a.load(page)
	if len(a.events) != 3 || a.events[0].ID != 3 || a.events[2].ID != 1 {
		t.Fatalf("load: %v", a.events)
	}
	if a.add(ev(2)) {
		t.Error("a duplicate was added")
	}
	for id := int64(4); id <= 60; id++ {
		a.add(ev(id))
	}
	if len(a.events) != activityMax || a.events[0].ID != 60 || a.events[activityMax-1].ID != 11 {
		t.Fatalf("after 60 events: %d kept, first %d, last %d", len(a.events), a.events[0].ID, a.events[len(a.events)-1].ID)
	}
	line := eventLine(ev(7))
	for _, part := range []string{"alice-agent", "Read a file", "/tmp/f7", "Denied (nobody asked)"} {
		if !strings.Contains(line, part) {
			t.Errorf("line %q lacks %q", line, part)
		}
	}
	if got := eventURL("http://127.0.0.1:8765/login?code=abc", "42"); got != "http://127.0.0.1:8765/login?code=abc#event=42" {
		t.Errorf("eventURL = %q", got)
	}
	if got := eventURL("http://h/login?code=abc#old", "7"); got != "http://h/login?code=abc#event=7" {
		t.Errorf("eventURL with a fragment = %q", got)
	}
}
