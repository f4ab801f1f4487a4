// Package words is the one table of the words Corral's surfaces show the
// owner for its own concepts: what an agent did (operations), what was
// decided (decisions), who decided (the owner is "you", a paired device
// goes by its name), how long an answer lasts (lifetimes), answers that
// cover a whole folder, pause, secrets and the countdown of a question.
//
// Every surface reads it: the native dialog and the tray (ui), the CLI
// (app), and the dashboard and phone page through assets/web/js/lib/words.js,
// which is generated from Table (go test ./core/words -update) and checked
// to be up to date by TestModuleUpToDate. TestSurfaces reads every
// surface's source and fails on a phrasing of these concepts that is not
// from here (Banned lists the ones seen before the table existed).
//
// Operations and decisions stay in core/audit's table and the answers to a
// question in core/policy's (each next to the code that gives them their
// meaning); Table gathers them with the rest. To add a word: add it to a
// var or const below, add it to Table if the web needs it, and run the
// tests with -update.
//
// Not guaranteed: the surfaces' free sentences (help texts, error
// sentences) are not parsed; only the labels and phrasings named here and
// in Banned are checked.
package words

import (
	"fmt"
	"strings"
	"time"

	"corral/core/audit"
	"corral/core/policy"
)

// You is how every surface names the owner as the one who decided or
// acted: never "owner", "browser" or "tray".
const You = "you"

// ownerClients are the client names of the owner's own surfaces in the
// audit log (the owner's token, the dashboard, the tray, the CLI).
var ownerClients = append([]string{"tray", "dialog", "cli"}, audit.OwnerClients...)

// Who names the client that did or decided something: "you" for the
// owner's own surfaces, a paired device by its name (without "device:"),
// an agent by its name.
func Who(client string) string {
	if name, ok := strings.CutPrefix(client, audit.DevicePrefix); ok {
		return name
	}
	if strings.HasPrefix(client, "dashboard:") {
		return You
	}
	for _, o := range ownerClients {
		if client == o {
			return You
		}
	}
	return client
}

// OpLabel is an operation's words ("Read a file"); an operation missing
// from audit's table is shown as recorded.
func OpLabel(op string) string {
	for _, o := range audit.Operations {
		if o.Name == op {
			return o.Label
		}
	}
	return op
}

// DecisionLabel is a decision's word: "Allowed", "Denied", "Failed".
func DecisionLabel(d audit.Decision) string {
	for _, x := range audit.DecisionLabels {
		if x.Decision == d {
			return x.Label
		}
	}
	return string(d)
}

// DecidedBy is the short word for who or what decided, as the Activity
// table shows it.
var DecidedBy = map[audit.DecidedBy]string{
	audit.ByScope:   "own folder",
	audit.ByRoot:    "open folder",
	audit.ByRule:    "by a rule",
	audit.ByOwner:   "by " + You,
	audit.ByTimeout: "timed out",
	audit.ByStrict:  "nobody asked",
	audit.ByPaused:  "paused",
}

// Access names what a question asks for, on its own (a chip, the
// dialog's "Wants to" line).
var Access = map[string]string{
	"read": "read", "write": "change", "delete": "delete", "execute": "run a command", "network": "network access",
}

// Lifetime is one choice of how long an "always" answer lasts.
type Lifetime struct {
	Label string        // "for 7 days"
	Wire  string        // approval.respond's expires_in ("" forever)
	D     time.Duration // 0: forever
}

// Lifetimes are offered in this order; DefaultLifetime is chosen first, so
// nothing is allowed forever by default.
var Lifetimes = []Lifetime{
	{"for 1 hour", "1h", time.Hour},
	{"for 1 day", "24h", 24 * time.Hour},
	{"for 7 days", "7d", 7 * 24 * time.Hour},
	{"for 30 days", "30d", 30 * 24 * time.Hour},
	{"forever", "", 0},
}

// DefaultLifetime indexes Lifetimes.
const DefaultLifetime = 2

// The phrasings around a question's answers.
const (
	// AlwaysLasts labels the lifetime choice.
	AlwaysLasts = "“Always” lasts"
	// FolderWide labels the box that widens a remembered answer to the
	// folder it names after it.
	FolderWide = "Remembered answers cover the whole folder"
	// OnceOnly replaces both under a question that cannot be remembered.
	OnceOnly = "This can only be allowed or denied once."
	// NetworkOnce is OnceOnly for a command's network without a list.
	NetworkOnce = "Network for a command that named no websites is asked every time: it can only be allowed or denied once."
	// CountdownLabel heads the countdown of a question.
	CountdownLabel = "Time left to answer"
	// CountdownText is the countdown, with %s the time left ("1:23").
	CountdownText = "Denied automatically in %s unless you answer."
	// TimeUp replaces the countdown once the time is up.
	TimeUp = "Time is up: the request is being denied."
)

// Countdown is the line under a question: how long until it is denied.
func Countdown(left time.Duration) string {
	left = left.Round(time.Second)
	if left <= 0 {
		return TimeUp
	}
	return fmt.Sprintf(CountdownText, fmt.Sprintf("%d:%02d", int(left.Minutes()), int(left.Seconds())%60))
}

// The countdown's colours, the same in the native dialog and the web: the
// bar is CountdownColor until CountdownLow is left, then CountdownLowColor.
const (
	CountdownColor    = "#2f6f5e"
	CountdownLowColor = "#c8643f"
	CountdownLow      = 20 * time.Second
)

// Careful is the warning over a question whose target holds secrets (why
// is paths.Sensitive's few words). Such a question is asked — Corral
// never answers it alone — with Deny as the default and no folder-wide
// answer.
func Careful(why string) string {
	return "Careful: secrets — " + why + ". Deny unless you are sure."
}

// Pause: what pausing agents does, as the banner, the button and the tray
// say it. While paused every call an agent makes is refused at once and
// logged with its target; running commands are stopped.
const (
	PauseAgents  = "Pause agents"
	ResumeAgents = "Resume agents"
	PausedTitle  = "Agents are paused."
	PausedBanner = "Every call an agent makes is refused at once (recorded in Activity), and running commands were stopped."
)

// Network is what the guide promises about a command's network, true of
// netgate and policy: the owner is asked about each website a command
// names before it starts, and may remember the answer for that website;
// a command that names none is asked about once, every time.
const Network = "Reach the internet from a command: it asks you first about each website the command names (you may allow one for good), or every time for a command that names none — or you turn network off for it."

// Secrets is what the guide promises about passwords and keys.
const Secrets = "Open your passwords, keys or browser profiles without a warning: Corral asks with “Careful: secrets”, Deny first, and never for a whole folder."

// OffLimits is what the guide promises about what is never offered.
const OffLimits = "See other people’s folders or Corral’s own files — never, not even if you click Allow."

// Outside names where a target outside every agent folder is: "outside
// the agents' folders" rather than someone's folder.
const Outside = "outside the agents’ folders"

// Banned are phrasings the surfaces used for these concepts before the
// table, each with what to say instead; TestSurfaces fails on any of them.
var Banned = map[string]string{
	"Apply to this folder":                                     FolderWide,
	"Remember “always” for":                                    AlwaysLasts,
	"Remember \"always\" for":                                  AlwaysLasts,
	"Answered elsewhere (":                                     "Who(by)",
	"asks every time (or you":                                  Network,
	"your passwords — never":                                   Secrets,
	"that would need your approval is denied":                  PausedBanner,
	"anything that would need your approval is denied at once": PausedBanner,
	"by ${r.created_by || 'someone'}":                          "who(r.created_by)",
	"h('td', { class: 't-client' }, e.client)":                 "who(e.client)",
	"['Agent', e.client]":                                      "who(e.client)",
	"string(e.DecidedBy) + \")\"":                              "DecidedBy",
}

// Choice is one answer to a question, on the wire to the web.
type Choice struct {
	Decision string `json:"decision"`
	Label    string `json:"label"`
	Explain  string `json:"explain"`
	Said     string `json:"said"`
	Allows   bool   `json:"allows"`
}

type op struct {
	Op    string `json:"op"`
	Label string `json:"label"`
}

type lifetime struct {
	Label string `json:"label"`
	Wire  string `json:"value"`
}

// Words is the table as the web reads it (assets/web/js/lib/words.js).
type Words struct {
	You            string            `json:"you"`
	OwnerClients   []string          `json:"owner_clients"`
	DevicePrefix   string            `json:"device_prefix"`
	Operations     []op              `json:"operations"`
	Decisions      map[string]string `json:"decisions"`
	DecidedBy      map[string]string `json:"decided_by"`
	Access         map[string]string `json:"access"`
	Choices        []Choice          `json:"choices"`
	Lifetimes      []lifetime        `json:"lifetimes"`
	DefaultLife    int               `json:"default_lifetime"`
	AlwaysLasts    string            `json:"always_lasts"`
	FolderWide     string            `json:"folder_wide"`
	OnceOnly       string            `json:"once_only"`
	NetworkOnce    string            `json:"network_once"`
	CountdownLabel string            `json:"countdown_label"`
	CountdownText  string            `json:"countdown"`
	TimeUp         string            `json:"time_up"`
	CountdownLowMs int64             `json:"countdown_low_ms"`
	Careful        string            `json:"careful"` // with %s for why
	PauseAgents    string            `json:"pause_agents"`
	ResumeAgents   string            `json:"resume_agents"`
	PausedTitle    string            `json:"paused_title"`
	PausedBanner   string            `json:"paused_banner"`
	Network        string            `json:"network"`
	Secrets        string            `json:"secrets"`
	OffLimits      string            `json:"off_limits"`
	Outside        string            `json:"outside"`
}

// Table is every word above, as the web reads it.
func Table() Words {
	w := Words{
		You: You, OwnerClients: ownerClients, DevicePrefix: audit.DevicePrefix,
		Decisions: map[string]string{}, DecidedBy: map[string]string{}, Access: Access,
		DefaultLife: DefaultLifetime, AlwaysLasts: AlwaysLasts, FolderWide: FolderWide,
		OnceOnly: OnceOnly, NetworkOnce: NetworkOnce, CountdownLabel: CountdownLabel, CountdownText: CountdownText, TimeUp: TimeUp,
		CountdownLowMs: CountdownLow.Milliseconds(), Careful: Careful("%s"),
		PauseAgents: PauseAgents, ResumeAgents: ResumeAgents, PausedTitle: PausedTitle, PausedBanner: PausedBanner,
		Network: Network, Secrets: Secrets, OffLimits: OffLimits, Outside: Outside,
	}
	for _, o := range audit.Operations {
		w.Operations = append(w.Operations, op{o.Name, o.Label})
	}
	for _, d := range audit.DecisionLabels {
		w.Decisions[string(d.Decision)] = d.Label
	}
	for k, v := range DecidedBy {
		w.DecidedBy[string(k)] = v
	}
	for _, c := range policy.AllChoices() {
		w.Choices = append(w.Choices, Choice{string(c.Decision), c.Label, c.Explain, c.Said, c.Allows})
	}
	for _, l := range Lifetimes {
		w.Lifetimes = append(w.Lifetimes, lifetime{l.Label, l.Wire})
	}
	return w
}
