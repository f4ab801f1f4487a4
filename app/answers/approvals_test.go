package answers

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/testkit/errkind"
)

// The approval methods' logic against a map-backed fake of the policy:
// no database, no sockets. app/server's approvals_test.go runs the same
// methods end to end against the real parts.

// fakeQueue is a Queue over maps: pending questions and rules by
// id, the answers given and the pause.
type fakeQueue struct {
	pending map[string]policy.Approval
	rules   map[string]policy.Rule
	answers []policy.Answer
	paused  bool
}

func (q *fakeQueue) Pending() []policy.Approval {
	return slices.SortedFunc(maps.Values(q.pending), func(a, b policy.Approval) int { return strings.Compare(a.ID, b.ID) })
}

func (q *fakeQueue) Respond(ctx context.Context, ans policy.Answer) error {
	if _, ok := q.pending[ans.ID]; !ok {
		return errs.New(errs.NotFound, "", "There is no question %q waiting.", ans.ID)
	}
	delete(q.pending, ans.ID)
	q.answers = append(q.answers, ans)
	return nil
}

func (q *fakeQueue) Subscribe(policy.Surface) func() { return func() {} }

func (q *fakeQueue) Rules() []policy.Rule {
	return slices.SortedFunc(maps.Values(q.rules), func(a, b policy.Rule) int { return strings.Compare(a.ID, b.ID) })
}

func (q *fakeQueue) Revoke(ctx context.Context, id, by string) error {
	if _, ok := q.rules[id]; !ok {
		return errs.New(errs.NotFound, "", "There is no rule %q.", id)
	}
	delete(q.rules, id)
	return nil
}

func (q *fakeQueue) SetPaused(ctx context.Context, paused bool, by string) error {
	q.paused = paused
	return nil
}

// respond decodes params as the method table does and answers them as
// the owner's command line.
func respond(t *testing.T, ap Approvals, params string) (Decided, error) {
	t.Helper()
	var a Answer
	if err := rpc.DecodeParams(json.RawMessage(params), &a); err != nil {
		return Decided{}, err
	}
	return ap.Respond(t.Context(), "owner", "cli", a)
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

func TestApprovalAreaListsQuestionsWithTheirChoices(t *testing.T) {
	q := &fakeQueue{pending: map[string]policy.Approval{
		"a2": {ID: "a2", Access: policy.Read, Target: "/home/ann/.ssh/id_ed25519", Sensitive: "SSH keys"},
		"a1": {ID: "a1", Access: policy.Write, Target: "/home/ann/notes.txt"},
	}}
	ap := Approvals{Queue: func() Queue { return q }}
	res, err := ap.List(t.Context(), "owner", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Pending []struct {
			ID              string          `json:"id"`
			Choices         []policy.Choice `json:"choices"`
			DefaultDecision string          `json:"default_decision"`
		} `json:"pending"`
	}
	if err := json.Unmarshal([]byte(wireOf(t, res)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pending) != 2 || got.Pending[0].ID != "a1" || got.Pending[1].ID != "a2" {
		t.Fatalf("pending = %+v, want a1 and a2", got.Pending)
	}
	if got.Pending[0].DefaultDecision != string(policy.AllowOnce) || got.Pending[1].DefaultDecision != string(policy.DenyOnce) {
		t.Errorf("defaults = %q, %q; want allow_once for a file, deny_once for SSH keys", got.Pending[0].DefaultDecision, got.Pending[1].DefaultDecision)
	}
	if len(got.Pending[0].Choices) == 0 {
		t.Error("a question came without the answers it accepts")
	}

	q.pending = map[string]policy.Approval{}
	res, err = ap.List(t.Context(), "owner", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"pending":[]}` {
		t.Errorf("nothing waiting: %s, want an empty list, not null", w)
	}
}

func TestApprovalAreaPassesTheOwnersAnswer(t *testing.T) {
	q := &fakeQueue{pending: map[string]policy.Approval{"a1": {ID: "a1", Access: policy.Write, Target: "/home/ann/f"}}}
	ap := Approvals{Queue: func() Queue { return q }}

	res, err := respond(t, ap, `{"id":"a1","decision":"allow_always","widen":"folder","expires_in":"1h"}`)
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"decision":"allow_always","id":"a1"}` {
		t.Errorf("result %s", w)
	}
	want := policy.Answer{ID: "a1", Decision: policy.AllowAlways, Widen: "folder", ExpiresIn: time.Hour, By: "owner", Via: "cli"}
	if len(q.answers) != 1 || q.answers[0] != want {
		t.Fatalf("answers = %+v, want %+v", q.answers, want)
	}

	_, err = respond(t, ap, `{"id":"a1","decision":"deny_once"}`)
	errkind.Want(t, err, errs.NotFound) // answered already
	_, err = respond(t, ap, `{"id":"a1","decision":"allow_always","expires_in":"soon"}`)
	errkind.Want(t, err, errs.InvalidParams)
	_, err = respond(t, ap, `{"decision":"allow_once"}`)
	errkind.Want(t, err, errs.InvalidParams) // id is required
	if len(q.answers) != 1 {
		t.Errorf("refused answers reached the policy: %+v", q.answers)
	}
}

func TestApprovalAreaRulesAndPause(t *testing.T) {
	q := &fakeQueue{rules: map[string]policy.Rule{"r1": {ID: "r1", Client: "bot", Target: "/home/ann"}}}
	var told []bool
	ap := Approvals{Queue: func() Queue { return q }, OnPause: func(p bool) { told = append(told, p) }}

	res, err := ap.Rules(t.Context(), "owner", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); !strings.Contains(w, `"id":"r1"`) {
		t.Errorf("rule.list = %s, want rule r1", w)
	}
	if _, err := ap.Revoke(t.Context(), "owner", IDParams{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if len(q.rules) != 0 {
		t.Error("rule.revoke left the rule standing")
	}
	_, err = ap.Revoke(t.Context(), "owner", IDParams{ID: "r1"})
	errkind.Want(t, err, errs.NotFound)

	paused, err := ap.Pause(t.Context(), "owner", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, paused); w != `{"paused":true}` || !q.paused || !slices.Equal(told, []bool{true}) {
		t.Errorf("pause: result %s, policy paused %v, tray told %v", w, q.paused, told)
	}
	if _, err := ap.Resume(t.Context(), "owner", struct{}{}); err != nil || q.paused {
		t.Errorf("resume: err %v, still paused %v", err, q.paused)
	}
}

func TestApprovalAreaWithApprovalsOff(t *testing.T) {
	ap := Approvals{Queue: func() Queue { return nil }}
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"approval.list", func() error { _, err := ap.List(ctx, "owner", struct{}{}); return err }},
		{"approval.respond", func() error { _, err := respond(t, ap, `{"id":"a1","decision":"allow_once"}`); return err }},
		{"approval.subscribe", func() error {
			_, err := ap.Subscribe(func() bool { return true }, func() policy.Surface { return Notifier{Send: func(string, any) {}} })
			return err
		}},
		{"rule.list", func() error { _, err := ap.Rules(ctx, "owner", struct{}{}); return err }},
		{"rule.revoke", func() error { _, err := ap.Revoke(ctx, "owner", IDParams{ID: "r1"}); return err }},
		{"agents.pause", func() error { _, err := ap.Pause(ctx, "owner", struct{}{}); return err }},
	} {
		err := tc.fn()
		if errs.KindOf(err) != errs.Unavailable {
			t.Errorf("%s: %v, want unavailable", tc.name, err)
		}
	}
}
