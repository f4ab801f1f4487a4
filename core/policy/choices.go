package policy

// Choice is one answer the owner can give to an approval, in the words
// every surface (native dialog, tray menu, dashboard, phone, CLI) uses
// for it. The table below is the only place those words are written.
type Choice struct {
	Decision Decision
	Label    string // the button
	Explain  string // one short sentence under or beside it
	Said     string // "the agent was …" once answered
	Allows   bool   // allow row (true) or deny row (false)
	// Remembers is set on the answers that make a rule; an approval that
	// can only be answered once does not offer them.
	Remembers bool
}

// choices is the table, in the order surfaces show it: the allow row,
// then the deny row, each from the narrowest answer to the widest.
var choices = []Choice{
	{AllowOnce, "Allow once", "Only this request.", "allowed once", true, false},
	{AllowSession, "Allow until restart", "This and the same requests until Corral restarts.", "allowed until Corral restarts", true, true},
	{AllowAlways, "Always allow", "A rule: the same requests are allowed without asking.", "always allowed", true, true},
	{DenyOnce, "Deny", "Only this request.", "denied", false, false},
	{DenyAlways, "Always deny", "A rule: the same requests are denied without asking.", "always denied", false, true},
}

// AllChoices is the whole table, for surfaces that learn it once (the
// dashboard reads it from session.info).
func AllChoices() []Choice { return append([]Choice(nil), choices...) }

// Choices are the answers a accepts, in table order.
func (a Approval) Choices() []Choice {
	out := make([]Choice, 0, len(choices))
	for _, c := range choices {
		if !c.Remembers || !a.OneTimeOnly {
			out = append(out, c)
		}
	}
	return out
}

// Default is the answer keyboard focus starts on: Deny when the target
// holds secrets, otherwise Allow once, which makes no rule.
func (a Approval) Default() Decision {
	if a.Sensitive != "" {
		return DenyOnce
	}
	return AllowOnce
}

// ChoiceFor returns d's row of the table.
func ChoiceFor(d Decision) (Choice, bool) {
	for _, c := range choices {
		if c.Decision == d {
			return c, true
		}
	}
	return Choice{}, false
}

// FolderName is how surfaces name the folder an agent acts in (its
// "scope" on the wire): "alice's folder", "the default folder".
func FolderName(user string) string {
	switch user {
	case "", "default":
		return "the default folder"
	case "companion":
		return "the companion folder"
	}
	return user + "’s folder"
}
