package policy

import "corral/core/errs"

// Level is an agent's trust level: a named set of its settings, chosen in
// one click (docs/protocol.md section 6, agent.set_level). The table below is
// the only place their names and words are written; every surface reads
// it (session.info).
type Level string

const (
	LevelAsk      Level = "ask"       // each command is asked; network per domain
	LevelTrusted  Level = "trusted"   // commands in its folder run without asking; network per domain
	LevelReadOnly Level = "read_only" // reads only: no writes, no deletes, no commands
	LevelCustom   Level = "custom"    // settings that are none of the above
)

// LevelInfo is one trust level: its words and the settings it stands for.
type LevelInfo struct {
	Level   Level
	Label   string // "Ask me"
	Explain string // what it lets the agent do, in a sentence or two
	// The settings the level sets.
	AskCommands bool   // each command needs the owner's one-time approval
	Network     string // "ask" (per domain) or "off"
	ReadOnly    bool   // no writes, deletes or commands at all
}

var levels = []LevelInfo{
	{LevelAsk, "Ask me", "Reads and writes in its own folder. Asks you before each command, before anything outside its folder, and before each network domain.", true, "ask", false},
	{LevelTrusted, "Trusted in its folder", "Reads, writes and runs commands in its own folder without asking. Still asks before anything outside its folder and before each network domain.", false, "ask", false},
	{LevelReadOnly, "Read-only", "Reads and lists its folder. Cannot write, delete or run commands; asks before reading anything outside its folder.", true, "off", true},
}

// Levels lists the named levels in the order surfaces show them.
func Levels() []LevelInfo { return append([]LevelInfo(nil), levels...) }

// LevelFor returns the named level's row; Custom has none.
func LevelFor(l Level) (LevelInfo, bool) {
	for _, li := range levels {
		if li.Level == l {
			return li, true
		}
	}
	return LevelInfo{}, false
}

// LevelOf names the level the settings make: Read-only wins, then the
// level whose settings they are, else Custom.
func LevelOf(askCommands bool, network string, readOnly bool) Level {
	if readOnly {
		return LevelReadOnly
	}
	for _, li := range levels {
		if !li.ReadOnly && li.AskCommands == askCommands && li.Network == network {
			return li.Level
		}
	}
	return LevelCustom
}

// Label is the level's name as the owner reads it.
func (l Level) Label() string {
	if li, ok := LevelFor(l); ok {
		return li.Label
	}
	return "Custom"
}

// Permits decides whether an agent at level l may make an access at all,
// before any folder, root or rule is looked at: the one place a trust
// level refuses. A Read-only agent may read; its writes, deletes and
// commands (and so their network) are refused with a sentence naming
// the level.
func (l Level) Permits(a Access) error {
	if l != LevelReadOnly || a == Read {
		return nil
	}
	what := "write or delete files"
	if a == Execute || a == Network {
		what = "run commands"
	}
	return errs.New(errs.Denied, "", "Corral refused: this agent is Read-only, so it may not %s. The owner can change its trust level on the Agents page.", what)
}
