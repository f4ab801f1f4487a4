package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"corral/core/policy"
	"corral/core/visible"
	"corral/core/words"
)

// GuardDelay is how long a freshly shown approval ignores its buttons, so
// that a click or keystroke meant for another window cannot answer it.
const GuardDelay = 750 * time.Millisecond

// answeredBy names the tray in the audit log and in approval.resolved.
const answeredBy = "tray"

var (
	errTooSoon     = errors.New("the approval appeared less than 750 ms ago")
	errNotAccepted = errors.New("this approval does not accept that decision")
)

// expiries are the "“Always” lasts" choices that go with the "always"
// answers, in the words and order of core/words (the web's too).
var expiries = words.Lifetimes

func expiryLabels() []string {
	out := make([]string, len(expiries))
	for i, e := range expiries {
		out[i] = e.Label
	}
	return out
}

// expiryFor maps a label of expiryLabels back to its duration.
func expiryFor(label string) time.Duration {
	for _, e := range expiries {
		if e.Label == label {
			return e.D
		}
	}
	return 0
}

// prompt is one approval as the dialog shows it, and the rules for
// answering it. It holds no widgets: the dialog renders it.
type prompt struct {
	a     policy.Approval
	shown time.Time // when it appeared on screen; the guard counts from here
}

// choices are the buttons, in the order and words of the policy's table:
// the five answers, or only "Allow once" and "Deny" for a one-time-only
// approval (network, asked commands).
func (p prompt) choices() []policy.Choice { return p.a.Choices() }

// remembers reports whether the approval can create a rule at all, so
// whether the "always" options make sense.
func (p prompt) remembers() bool { return !p.a.OneTimeOnly }

// canWiden reports whether "apply to this folder" is offered: only file
// requests that can become rules.
func (p prompt) canWiden() bool {
	if p.a.OneTimeOnly || p.a.Folder == "" {
		return false // the policy offers no folder: it would reach the home folder, Corral's files or "/"
	}
	switch p.a.Access {
	case policy.Read, policy.Write, policy.Delete:
		return true
	}
	return false
}

// folder is what "apply to this folder" covers, as the policy says.
func (p prompt) folder() string { return visible.Text(p.a.Folder) }

// ready reports whether the guard has passed.
func (p prompt) ready(now time.Time) bool { return now.Sub(p.shown) >= GuardDelay }

// answer builds the broker answer for a button press at now. The folder
// and expiry options only travel with the decisions that make a rule.
func (p prompt) answer(now time.Time, d policy.Decision, widen bool, exp time.Duration) (policy.Answer, error) {
	if !p.ready(now) {
		return policy.Answer{}, errTooSoon
	}
	if !slices.Contains(p.a.Decisions(), d) {
		return policy.Answer{}, errNotAccepted
	}
	ans := policy.Answer{ID: p.a.ID, Decision: d, By: answeredBy, Via: "dialog"}
	rule := d == policy.AllowSession || d == policy.AllowAlways || d == policy.DenyAlways
	if widen && rule && p.canWiden() {
		ans.Widen = "folder"
	}
	if exp > 0 && (d == policy.AllowAlways || d == policy.DenyAlways) {
		ans.ExpiresIn = exp
	}
	return ans, nil
}

// withReason adds the owner's sentence typed next to Deny ("use the
// share folder instead") to a denying answer; an allow never carries it.
// The policy cleans it again (policy.AnswerReason).
func withReason(ans policy.Answer, reason string) policy.Answer {
	if !ans.Decision.Allows() {
		ans.Reason = policy.AnswerReason(reason)
	}
	return ans
}

// reasonHint is the reason field's placeholder.
const reasonHint = "If you deny, tell the agent why (optional)"

// The texts below are what the dialog and the notification show. An
// agent chose the target, the reason and parts of the description, so
// each is passed through visible.Text: no control character, ANSI
// sequence or bidi override reaches the screen as itself.

func (p prompt) title() string {
	if p.a.Description != "" {
		return visible.Text(p.a.Description)
	}
	return visible.Text(policy.Describe(p.a.Client, p.a.Access, p.a.Target))
}

func (p prompt) target() string {
	if p.a.Asked != "" {
		return visible.Text(fmt.Sprintf("%s (asked for %s, which leads there)", p.a.Target, p.a.Asked))
	}
	return visible.Text(p.a.Target)
}

// careful is the warning for a target that holds secrets, or "".
func (p prompt) careful() string {
	if p.a.Sensitive == "" {
		return ""
	}
	return words.Careful(visible.Text(p.a.Sensitive))
}

// defaultExpiry is the "always" lifetime offered first: a week, so that
// nothing is allowed forever by default.
const defaultExpiry = words.DefaultLifetime

// who names the agent, its trust level when the question carries one
// (as the dashboard's and the phone's cards do), and its folder.
func (p prompt) who() string {
	name := p.a.Client
	if p.a.Level != "" {
		name += " (" + p.a.Level.Label() + ")"
	}
	return visible.Text(name + ", working in " + policy.FolderName(p.a.User))
}

// notification is the desktop notification's body: the question on one
// line, cut to 200 runes (saying so), and with <, > and & shown as
// look-alikes (‹ › ＆), because notification servers may render the body
// as markup and Fyne cannot ask whether they do.
func (p prompt) notification() string {
	s := visible.Cut(visible.Line(p.title()), 200)
	return strings.NewReplacer("<", "‹", ">", "›", "&", "＆").Replace(s)
}

// access is the "Wants to" line in the web's words: "change", and for a
// question that cannot be remembered the web's sentence saying so.
func (p prompt) access() string {
	s, ok := words.Access[string(p.a.Access)]
	if !ok {
		s = visible.Text(string(p.a.Access))
	}
	if p.a.OneTimeOnly {
		once := words.OnceOnly
		if p.a.Access == policy.Network {
			once = words.NetworkOnce
		}
		s += " — " + once
	}
	return s
}

func (p prompt) why() string {
	if p.a.Reason == "" {
		return "The agent gave no reason."
	}
	return visible.Text(p.a.Reason)
}

func (p prompt) remaining(now time.Time) time.Duration {
	return max(p.a.ExpiresAt.Sub(now), 0)
}

// countdown is the line under the question: how long until the broker
// denies by timeout.
func (p prompt) countdown(now time.Time) string {
	return words.Countdown(p.remaining(now))
}

// progress is the share of the answering time that is left, 1 → 0.
func (p prompt) progress(now time.Time) float64 {
	total := p.a.ExpiresAt.Sub(p.a.RequestedAt)
	if total <= 0 {
		return 0
	}
	return min(max(float64(p.remaining(now))/float64(total), 0), 1)
}
