package policy

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/visible"
)

// Rules the owner writes by hand (rule.add, rule.update, rule.import):
// a Draft is checked by Prepare, which every way in uses, so a rule the
// owner saves, edits or imports meets the same limits as an answer widened
// to its folder: no folder-wide rule on "/", on a folder holding the
// owner's home, Corral's own files or the sandbox base, on a folder of
// secrets (paths.Sensitive); no rule at all inside Corral's own files or
// the sandbox base, which agents reach by their folders, never by a rule.

// Draft is a rule as the owner writes it.
type Draft struct {
	Client   string // an agent's name, or AnyClient (not for commands)
	User     string // the folder (scope) it applies in, or AnyClient
	Access   Access // read, write, delete, network or execute
	Target   string // a host path, a domain or *.domain, or a command's first words
	Folder   bool   // file rules: the folder and everything in it
	Decision Effect
	Expires  *time.Time // nil: never
	Note     string
}

// MaxNote bounds a rule's note, in characters.
const MaxNote = 300

// Prepare checks d and returns the rule it makes (without an id), its
// Description filled in. The caller decides who made it and when.
func (p *Policy) Prepare(d Draft) (Rule, error) {
	r := Rule{Client: strings.TrimSpace(d.Client), User: strings.TrimSpace(d.User), Access: d.Access, Decision: d.Decision,
		Match: Exact, Lifetime: Always, Note: strings.TrimSpace(d.Note)}
	if r.Client == "" || len(r.Client) > 64 || visible.Hidden(r.Client) {
		return Rule{}, errs.New(errs.InvalidParams, "", "A rule names one agent, or \"*\" for every agent.")
	}
	if r.User == "" || len(r.User) > 64 || visible.Hidden(r.User) {
		return Rule{}, errs.New(errs.InvalidParams, "", "A rule names the folder it applies in, or \"*\" for every folder.")
	}
	if r.Decision != EffectAllow && r.Decision != EffectDeny {
		return Rule{}, errs.New(errs.InvalidParams, "", "A rule either allows or denies: decision must be \"allow\" or \"deny\".")
	}
	if utf8.RuneCountInString(r.Note) > MaxNote || visible.Hidden(r.Note) {
		return Rule{}, errs.New(errs.InvalidParams, "", "A note has at most %d characters, all of them visible.", MaxNote)
	}
	if d.Expires != nil {
		if !d.Expires.After(p.now()) {
			return Rule{}, errs.New(errs.InvalidParams, "", "The rule would expire before it starts: choose a time in the future, or none.")
		}
		e := d.Expires.UTC()
		r.Expires = &e
	}
	if d.Folder && (r.Access == Network || r.Access == Execute) {
		return Rule{}, errs.New(errs.InvalidParams, "", "Only file rules can cover a whole folder.")
	}
	var err error
	switch r.Access {
	case Read, Write, Delete:
		r.Target, err = p.fileTarget(d.Target, d.Folder)
		if d.Folder {
			r.Match = Prefix
		}
	case Network:
		r.Target, err = CheckDomain(d.Target)
	case Execute:
		if r.Client == AnyClient {
			return Rule{}, errs.New(errs.InvalidParams, "", "A command rule is for one agent: choose which.")
		}
		r.Target, err = CheckCommandPrefix(d.Target)
		r.Match = Prefix
	default:
		return Rule{}, errs.New(errs.InvalidParams, "", "access must be read, write, delete, network or execute.")
	}
	if err != nil {
		return Rule{}, err
	}
	r.Description = r.describe()
	return r, nil
}

// fileTarget checks a file rule's path: absolute and clean, judged by its
// real name (the sandbox asks about real names, so that is what a rule
// must name to apply).
func (p *Policy) fileTarget(target string, folder bool) (string, error) {
	target = strings.TrimSpace(target)
	if err := CheckTarget(Read, target); err != nil {
		return "", err
	}
	real := paths.Resolved(target)
	for _, g := range p.cfg.Guarded {
		if g != p.cfg.Home && g != "" && paths.Within(real, g) {
			return "", errs.New(errs.InvalidParams, "", "%s is inside Corral's own files or the agents' folders: agents reach those by their own folders, never by a rule.", target)
		}
	}
	if folder {
		if p.widenable(real) == "" {
			return "", errs.New(errs.InvalidParams, "", "A rule cannot cover the whole of %s: it would reach your home folder, Corral's own files or the whole disk. Name a folder inside it, or one file.", target)
		}
		if why := paths.Sensitive(real, p.cfg.Home); why != "" {
			return "", errs.New(errs.InvalidParams, "", "A rule cannot cover the whole of %s: it holds %s. Name one file if you must.", target, why)
		}
	}
	return real, nil
}

// CheckDomain checks a network rule's target: a domain name (lowercased,
// without a final dot), "*." and a domain with a dot (any name below it),
// or an IP address.
func CheckDomain(d string) (string, error) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	bad := errs.New(errs.InvalidParams, "", "A network rule names a domain such as example.com, or *.example.com for every name below it, or an IP address.")
	if a, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil {
		if a.Zone() != "" {
			return "", bad
		}
		return a.Unmap().String(), nil
	}
	rest, wild := strings.CutPrefix(d, "*.")
	if rest == "" || len(rest) > 253 || (wild && !strings.Contains(rest, ".")) {
		return "", bad
	}
	for _, label := range strings.Split(rest, ".") {
		if label == "" || len(label) > 63 {
			return "", bad
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", bad
			}
		}
	}
	return d, nil
}

// Covers says in plain words what the rule covers and what it does not:
// the sentence the owner reads before saving it. It follows covers, so
// what it says is what the rule does.
func (r Rule) Covers() string {
	who := "the agent " + r.Client
	if r.Client == AnyClient {
		who = "every agent"
	}
	where := "in " + FolderName(r.User)
	if r.User == AnyClient {
		where = "whichever folder it works in"
	}
	verb := "Allows"
	if r.Decision == EffectDeny {
		verb = "Denies"
	}
	var what, not string
	switch {
	case r.Access == Execute && r.Match == Prefix:
		what = fmt.Sprintf("to run any command that starts with the words %q (such as %q)", r.Target, r.Target+" …")
		not = "A command that only looks similar (other words, or these words later in the line) is not covered, nor a line the shell would do more with than split into words (; && | $( ) ` > < * ~ …): those are asked as before. The command still follows its own settings files, which the agent can write (such as .git/config or package.json): through them it can run other programs without a question, inside its sandbox."
	case r.Access == Execute:
		what = fmt.Sprintf("to run exactly %q", r.Target)
	case r.Access == Network && strings.HasPrefix(r.Target, "*."):
		what = fmt.Sprintf("its commands to connect to any name ending in %s (such as www%s)", r.Target[1:], r.Target[1:])
		not = fmt.Sprintf("%s itself is not covered. A command still has to list the domain in allowed_domains.", r.Target[2:])
	case r.Access == Network:
		what = fmt.Sprintf("its commands to connect to %s", r.Target)
		not = fmt.Sprintf("Names below it (such as www.%s) are not covered. A command still has to list the domain in allowed_domains.", r.Target)
	case r.Match == Prefix:
		what = fmt.Sprintf("to %s anything in the folder %s and every folder inside it", r.Access.verb(), r.Target)
		not = fmt.Sprintf("Only %s access: other kinds are still asked.", r.Access)
	default:
		what = fmt.Sprintf("to %s the file %s, and nothing else in its folder", r.Access.verb(), r.Target)
	}
	if r.Decision == EffectDeny {
		not = strings.Replace(not, "those are asked as before", "those are asked as before, not denied", 1)
		if r.Access == Execute && r.Match == Prefix {
			// Red team: at Trusted, "/usr/bin/touch x" and "touch x; true"
			// ran under a deny rule on "touch", without a question.
			not += " So a deny rule stops the plain command, not the program: an agent at a level that runs commands without asking (Trusted in its folder) can still start it another way (\"/usr/bin/git push\", \"git push; true\")."
		}
	}
	when := "until you revoke it"
	if r.Expires != nil {
		when = "until " + r.Expires.Local().Format("2 Jan 2006 15:04")
	}
	s := fmt.Sprintf("%s %s %s, %s, without asking you, %s.", verb, who, what, where, when)
	if r.Decision == EffectDeny {
		s = strings.Replace(s, "without asking you", "without asking you (a deny rule beats every allow rule)", 1)
	}
	if not != "" {
		s += " " + not
	}
	return s
}

// same reports whether a and b decide the same thing (an import skips a
// rule already in force).
func same(a, b Rule) bool {
	return a.Client == b.Client && a.User == b.User && a.Access == b.Access && a.Target == b.Target && a.Match == b.Match && a.Decision == b.Decision
}

// AddRule checks d and stores it as a rule made by by; it is audited as
// rule.create.
func (p *Policy) AddRule(ctx context.Context, d Draft, by string) (Rule, error) {
	r, err := p.Prepare(d)
	if err != nil {
		return Rule{}, err
	}
	r.ID, r.Created, r.CreatedBy = newID("ru_"), p.now().UTC(), by
	if err := p.addRule(ctx, r); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// UpdateRule replaces the rule id with d, keeping its id and lifetime;
// it is audited as rule.update.
func (p *Policy) UpdateRule(ctx context.Context, id string, d Draft, by string) (Rule, error) {
	r, err := p.Prepare(d)
	if err != nil {
		return Rule{}, err
	}
	p.mu.Lock()
	i := slices.IndexFunc(p.rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		p.mu.Unlock()
		return Rule{}, errs.New(errs.NotFound, "", "There is no rule %q: it was revoked, it expired, or it lasted only until Corral restarted.", id)
	}
	old := p.rules[i]
	p.mu.Unlock()
	r.ID, r.Lifetime, r.Created, r.CreatedBy = old.ID, old.Lifetime, p.now().UTC(), by
	r.Description = r.describe()
	if r.Lifetime == Always {
		if _, err := p.cfg.Rules.DeleteRule(ctx, id); err != nil {
			return Rule{}, errs.Wrap(err, errs.IO, "", "Corral could not change the rule.")
		}
		if err := p.cfg.Rules.SaveRule(ctx, r); err != nil {
			if err2 := p.cfg.Rules.SaveRule(ctx, old); err2 != nil {
				p.log.Error("a rule was lost while being changed", "rule", id, "err", err2)
			}
			return Rule{}, errs.Wrap(err, errs.IO, "", "Corral could not change the rule.")
		}
	}
	p.mu.Lock()
	if j := slices.IndexFunc(p.rules, func(r Rule) bool { return r.ID == id }); j >= 0 {
		p.rules[j] = r
	} else {
		p.rules = append(p.rules, r)
	}
	p.mu.Unlock()
	detail := old.Description + " → " + r.Description
	return r, p.record(ctx, "rule.update", r.User, r.Target, detail, by)
}

// ImportRules checks every draft and then adds them all, or none: the
// first refused one is named by its entry number. Drafts that decide
// what a rule in force already decides are skipped. Each added rule is
// audited as rule.create.
func (p *Policy) ImportRules(ctx context.Context, drafts []ImportEntry, by string) (added, skipped int, err error) {
	rules := make([]Rule, 0, len(drafts))
	now := p.now().UTC()
	for _, e := range drafts {
		r, err := p.Prepare(e.Draft)
		if err != nil {
			return 0, 0, errs.New(errs.InvalidParams, "", "Entry %d (line %d) was refused, so nothing was imported: %s", e.Entry, e.Line, errs.As(err).Msg)
		}
		r.ID, r.Created, r.CreatedBy = newID("ru_"), now, by
		rules = append(rules, r)
	}
	current := p.Rules()
	var fresh []Rule
	for _, r := range rules {
		if slices.ContainsFunc(current, func(c Rule) bool { return same(c, r) }) || slices.ContainsFunc(fresh, func(c Rule) bool { return same(c, r) }) {
			skipped++
			continue
		}
		fresh = append(fresh, r)
	}
	if bs, ok := p.cfg.Rules.(RulesSaver); ok {
		if err := bs.SaveRules(ctx, fresh); err != nil {
			return 0, 0, errs.Wrap(err, errs.IO, "", "Corral could not save the imported rules; none was imported.")
		}
	} else {
		for i, r := range fresh {
			if err := p.cfg.Rules.SaveRule(ctx, r); err != nil {
				for _, done := range fresh[:i] {
					p.cfg.Rules.DeleteRule(context.WithoutCancel(ctx), done.ID)
				}
				return 0, 0, errs.Wrap(err, errs.IO, "", "Corral could not save the imported rules; none was imported.")
			}
		}
	}
	p.mu.Lock()
	p.rules = append(p.rules, fresh...)
	p.mu.Unlock()
	for _, r := range fresh {
		if err := p.record(ctx, "rule.create", r.User, r.Target, r.Description, by); err != nil {
			return len(fresh), skipped, err
		}
	}
	return len(fresh), skipped, nil
}
