package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/testkit/auditmem"
)

func newHandPolicy(t *testing.T) (*Policy, *memRules, *auditmem.Log) {
	t.Helper()
	return newHandPolicyTB(t)
}

func newHandPolicyTB(t testing.TB) (*Policy, *memRules, *auditmem.Log) {
	t.Helper()
	st, au := &memRules{rules: map[string]Rule{}}, &auditmem.Log{}
	p, err := New(context.Background(), Config{Rules: st, Audit: au, Home: "/home/owner",
		Guarded: []string{"/home/owner", "/srv/corral-agents", "/home/owner/.local/share/corral"}})
	if err != nil {
		t.Fatal(err)
	}
	return p, st, au
}

func TestCommandWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want string // words joined by "|"; "-" when not plain
	}{
		// valid
		{"git status", "git|status"},
		{"  git   status\t--short ", "git|status|--short"},
		{"npm test", "npm|test"},
		{"go test ./...", "go|test|./..."},
		{"python3 -m pytest -k name_x", "python3|-m|pytest|-k|name_x"},
		// odd but fine: quoted words are literal
		{"git commit -m 'a; b'", "git|commit|-m|a; b"},
		{`git commit -m "fix it"`, "git|commit|-m|fix it"},
		{`'git' status`, "git|status"},
		{`git" "status`, "git status"},
		// probing: the shell would do more than split words
		{"git status; rm -rf ~", "-"},
		{"git status && rm -rf ~", "-"},
		{"git status || x", "-"},
		{"git status | sh", "-"},
		{"git status & x", "-"},
		{"git status > /etc/passwd", "-"},
		{"git status < x", "-"},
		{"git status $(rm -rf ~)", "-"},
		{"git status `rm -rf ~`", "-"},
		{"git status ${HOME}", "-"},
		{"git status $HOME", "-"},
		{"git status\nrm -rf ~", "-"},
		{"git status\rrm", "-"},
		{"git status *", "-"},
		{"git status ?", "-"},
		{"git status [a]", "-"},
		{"git status ~", "-"},
		{"git status {a,b}", "-"},
		{"git status # x", "-"},
		{"git status \\; rm", "-"},
		{`git status "$(rm -rf ~)"`, "-"},
		{"git status \"`rm`\"", "-"},
		{`git status "\"x"`, "-"},
		{"git status 'unterminated", "-"},
		{`git status "unterminated`, "-"},
		{"GIT_DIR=/x git status", "-"},
		{"(git status)", "-"},
		{"git status\x00", "-"},
		{"", "-"},
		{"   ", "-"},
		{"git statu\u0073", "git|status"},
		{"git sta\u200btus", "-"},
	} {
		words, ok := CommandWords(c.line)
		got := "-"
		if ok {
			got = strings.Join(words, "|")
		}
		if got != c.want {
			t.Errorf("CommandWords(%q) = %q; want %q", c.line, got, c.want)
		}
	}
}

func TestCommandPrefixCovers(t *testing.T) {
	for _, c := range []struct {
		prefix, line string
		want         bool
	}{
		{"git status", "git status", true},
		{"git status", "git status --short", true},
		{"git status", "git  status", true},
		{"git status", "git push", false},
		{"git status", "git statusx", false},
		{"git status", "git", false},
		{"git status", "gitstatus", false},
		{"git status", "git status; rm -rf ~", false},
		{"git status", "git status && git push", false},
		{"git status", "git status | sh", false},
		{"git status", `sh -c "git status; rm -rf ~"`, false},
		{"git status", `sh -c 'git status'`, false},
		{"git status", "echo git status", false},
		{"git status", "/usr/bin/git status", false},
		{"git status", "GIT_DIR=x git status", false},
		{"git status", "git status $(touch x)", false},
		{"npm test", "npm test -- --watch=false", true},
		{"npm test", "npm install", false},
	} {
		if got := commandCovers(c.prefix, c.line); got != c.want {
			t.Errorf("%q covers %q = %v; want %v", c.prefix, c.line, got, c.want)
		}
	}
}

func TestCheckCommandPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"git status": "git status", "  npm   test ": "npm test", "'git' status": "git status",
		"sh -c": "-", "bash": "-", "/bin/sh -c": "-", "env git": "-", "sudo git": "-", "xargs": "-",
		"git status; rm": "-", "": "-", "git 'a b'": "-", "A=1 git": "-",
		strings.Repeat("a ", MaxCommandWords+1): "-",
	} {
		got, err := CheckCommandPrefix(in)
		if err != nil {
			got = "-"
			if errs.As(err).Kind != errs.InvalidParams {
				t.Errorf("%q: kind %v", in, errs.As(err).Kind)
			}
		}
		if got != want {
			t.Errorf("CheckCommandPrefix(%q) = %q (%v); want %q", in, got, err, want)
		}
	}
}

func TestHandRules(t *testing.T) {
	ctx := context.Background()
	p, st, au := newHandPolicy(t)
	future := time.Now().Add(time.Hour)
	t.Run("valid", func(t *testing.T) {
		for _, d := range []Draft{
			{Client: "bot", User: "alice", Access: Read, Target: "/srv/data/a.txt", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Write, Target: "/srv/data", Folder: true, Decision: EffectAllow, Note: "the data folder"},
			{Client: "bot", User: "alice", Access: Network, Target: "Example.COM.", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Network, Target: "*.example.org", Decision: EffectDeny, Expires: &future},
			{Client: "bot", User: "alice", Access: Execute, Target: "git  status", Decision: EffectAllow},
			{Client: "bot", User: "alice", Access: Read, Target: "/home/owner/.ssh/config", Decision: EffectAllow}, // one file of secrets: as an answer may
			{Client: "bot", User: "alice", Access: Read, Target: "/home/owner/Documents", Folder: true, Decision: EffectAllow},
		} {
			r, err := p.AddRule(ctx, d, "owner")
			if err != nil {
				t.Errorf("%+v: %v", d, err)
				continue
			}
			if r.ID == "" || st.rules[r.ID].Target != r.Target || r.Description == "" || r.Covers() == "" {
				t.Errorf("%+v: stored %+v", d, r)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		past := time.Now().Add(-time.Hour)
		for _, d := range []Draft{
			{Client: "*", User: "*", Access: Read, Target: "/", Folder: true, Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/home", Folder: true, Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/home/owner", Folder: true, Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/home/owner/.ssh", Folder: true, Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/home/owner/.local/share/corral/x", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Write, Target: "/srv/corral-agents/bob", Folder: true, Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "relative/path", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/a/../b", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Read, Target: "/a", Decision: "maybe"},
			{Client: "", User: "*", Access: Read, Target: "/a", Decision: EffectAllow},
			{Client: "*", User: "*", Access: "chmod", Target: "/a", Decision: EffectAllow},
			{Client: "*", User: "*", Access: Execute, Target: "git status", Decision: EffectAllow},
			{Client: "bot", User: "*", Access: Execute, Target: "sh -c", Decision: EffectAllow},
			{Client: "bot", User: "*", Access: Network, Target: "exa mple.com", Decision: EffectAllow},
			{Client: "bot", User: "*", Access: Network, Target: "*.com", Decision: EffectAllow},
			{Client: "bot", User: "*", Access: Network, Target: "example.com", Folder: true, Decision: EffectAllow},
			{Client: "bot", User: "*", Access: Read, Target: "/a", Decision: EffectAllow, Expires: &past},
			{Client: "bot", User: "*", Access: Read, Target: "/a", Decision: EffectAllow, Note: strings.Repeat("x", MaxNote+1)},
			{Client: "bot", User: "*", Access: Read, Target: "/a", Decision: EffectAllow, Note: "a\u202eb"},
		} {
			if _, err := p.AddRule(ctx, d, "owner"); err == nil || errs.As(err).Kind != errs.InvalidParams {
				t.Errorf("%+v: %v; want invalid_params", d, err)
			}
		}
	})
	t.Run("decide and audit", func(t *testing.T) {
		if r, ok := p.RuleFor("bot", "alice", Execute, "git status -s"); !ok || r.Decision != EffectAllow {
			t.Errorf("git status: %+v %v", r, ok)
		}
		if _, ok := p.RuleFor("bot", "alice", Execute, "git push"); ok {
			t.Error("git push is covered by a git status rule")
		}
		if _, ok := p.RuleFor("other", "alice", Execute, "git status"); ok {
			t.Error("another agent's command is covered")
		}
		if r, ok := p.RuleFor("any", "carol", Write, "/srv/data/x/y"); !ok || r.Decision != EffectAllow {
			t.Errorf("any agent, any folder: %+v %v", r, ok)
		}
		if r, ok := p.RuleFor("bot", "alice", Network, "example.com"); !ok || r.Target != "example.com" {
			t.Errorf("domain lowercased: %+v %v", r, ok)
		}
		if r, ok := p.RuleFor("bot", "alice", Network, "a.example.org"); !ok || r.Decision != EffectDeny {
			t.Errorf("wildcard deny: %+v %v", r, ok)
		}
		n := 0
		for _, op := range au.Ops() {
			if op == "rule.create" {
				n++
			}
		}
		if n != 7 {
			t.Errorf("%d rule.create events; want 7", n)
		}
	})
	t.Run("update", func(t *testing.T) {
		r, _ := p.RuleFor("bot", "alice", Execute, "git status")
		u, err := p.UpdateRule(ctx, r.ID, Draft{Client: "bot", User: "alice", Access: Execute, Target: "git diff", Decision: EffectAllow, Note: "n"}, "owner")
		if err != nil || u.ID != r.ID || st.rules[r.ID].Target != "git diff" {
			t.Fatalf("update: %+v %v", u, err)
		}
		if _, ok := p.RuleFor("bot", "alice", Execute, "git status"); ok {
			t.Error("the old rule still decides")
		}
		if _, err := p.UpdateRule(ctx, r.ID, Draft{Client: "bot", User: "alice", Access: Read, Target: "/", Folder: true, Decision: EffectAllow}, "owner"); err == nil {
			t.Error("an update to a folder-wide rule on / was accepted")
		}
		if _, err := p.UpdateRule(ctx, "ru_none", Draft{Client: "bot", User: "alice", Access: Read, Target: "/x", Decision: EffectAllow}, "owner"); errs.As(err).Kind != errs.NotFound {
			t.Errorf("unknown id: %v", err)
		}
	})
}

func TestCoversSentence(t *testing.T) {
	p, _, _ := newHandPolicy(t)
	for _, c := range []struct {
		d    Draft
		want []string
	}{
		{Draft{Client: "bot", User: "alice", Access: Execute, Target: "git status", Decision: EffectAllow},
			[]string{"Allows the agent bot", `starts with the words "git status"`, "alice’s folder", "not covered",
				// Red team: under a "git status" rule, a .git/config the agent
				// wrote (core.fsmonitor) ran its script without a question.
				"settings files, which the agent can write", "run other programs without a question"}},
		{Draft{Client: "*", User: "*", Access: Network, Target: "*.example.com", Decision: EffectAllow},
			[]string{"every agent", "any name ending in .example.com", "example.com itself is not covered"}},
		{Draft{Client: "*", User: "*", Access: Write, Target: "/srv/data", Folder: true, Decision: EffectDeny},
			[]string{"Denies every agent", "the folder /srv/data and every folder inside it", "a deny rule beats"}},
		{Draft{Client: "bot", User: "alice", Access: Execute, Target: "git push", Decision: EffectDeny},
			[]string{"Denies the agent bot", "not denied", "stops the plain command, not the program", "Trusted in its folder"}},
		{Draft{Client: "bot", User: "alice", Access: Read, Target: "/srv/a.txt", Decision: EffectAllow},
			[]string{"the file /srv/a.txt, and nothing else"}},
	} {
		r, err := p.Prepare(c.d)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Covers(), w) {
				t.Errorf("%q lacks %q", r.Covers(), w)
			}
		}
	}
}

func TestRulesFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	p, _, _ := newHandPolicy(t)
	for _, d := range []Draft{
		{Client: "bot", User: "alice", Access: Execute, Target: "npm test", Decision: EffectAllow, Note: "tests"},
		{Client: "*", User: "*", Access: Write, Target: "/srv/data", Folder: true, Decision: EffectDeny},
		{Client: "bot", User: "alice", Access: Network, Target: "*.example.com", Decision: EffectAllow},
	} {
		if _, err := p.AddRule(ctx, d, "owner"); err != nil {
			t.Fatal(err)
		}
	}
	data := p.ExportRules()
	q, _, au := newHandPolicy(t)
	entries, err := ParseRulesFile(data)
	if err != nil {
		t.Fatal(err)
	}
	added, skipped, err := q.ImportRules(ctx, entries, "owner")
	if err != nil || added != 3 || skipped != 0 {
		t.Fatalf("import: %d %d %v\n%s", added, skipped, err, data)
	}
	if string(q.ExportRules()) != string(data) {
		t.Errorf("export after import differs:\n%s\n%s", q.ExportRules(), data)
	}
	// Again: everything is already there.
	if added, skipped, err := q.ImportRules(ctx, entries, "owner"); err != nil || added != 0 || skipped != 3 {
		t.Errorf("second import: %d %d %v", added, skipped, err)
	}
	if len(au.Ops()) != 3 {
		t.Errorf("events %v", au.Ops())
	}
}

func TestImportRefusesAndNamesTheEntry(t *testing.T) {
	ctx := context.Background()
	p, st, _ := newHandPolicy(t)
	file := `{"corral_rules": 1, "rules": [
  {"agent": "bot", "folder": "alice", "access": "read", "target": "/srv/ok", "decision": "allow"},
  {"agent": "*", "folder": "*", "access": "read",
   "target": "/home/owner", "whole_folder": true, "decision": "allow"}
]}`
	entries, err := ParseRulesFile([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.ImportRules(ctx, entries, "owner")
	if err == nil || !strings.Contains(err.Error(), "Entry 2 (line 3)") || !strings.Contains(err.Error(), "home folder") {
		t.Errorf("import of a folder-wide home rule: %v", err)
	}
	if len(st.rules) != 0 || len(p.Rules()) != 0 {
		t.Errorf("something was imported: %v", st.rules)
	}
	// A failing store leaves nothing behind either.
	st.fail = true
	entries, _ = ParseRulesFile([]byte(`{"corral_rules":1,"rules":[{"agent":"*","folder":"*","access":"read","target":"/srv/a","decision":"allow"}]}`))
	if _, _, err := p.ImportRules(ctx, entries, "owner"); errs.As(err).Kind != errs.IO || len(p.Rules()) != 0 {
		t.Errorf("failing store: %v %v", err, p.Rules())
	}
}

func TestParseRulesFileFaults(t *testing.T) {
	for file, want := range map[string]string{
		``:                                 "Line 1",
		`[]`:                               "not a Corral rules file",
		`{"rules": []}`:                    "is missing",
		`{"corral_rules": 2, "rules": []}`: "version 2",
		`{"corral_rules": 1}`:              "no \"rules\"",
		`{"corral_rules": 1, "rules": [], "x": 1}`:                                           "unknown field \"x\"",
		"{\"corral_rules\": 1, \"rules\": [\n{\"agent\": 5}]}":                               "Entry 1 (line 2)",
		"{\"corral_rules\": 1, \"rules\": [\n{},\n{\"agent\": \"a\", \"colour\": \"red\"}]}": "Entry 2 (line 3)",
		`{"corral_rules": 1, "rules": [{"expires": "soon"}]}`:                                "expires",
		`{"corral_rules": 1, "rules": []} {}`:                                                "more after the end",
		`{"corral_rules": 1, "rules": [`:                                                     "ends too early",
	} {
		_, err := ParseRulesFile([]byte(file))
		if err == nil || !strings.Contains(err.Error(), want) || errs.As(err).Kind != errs.InvalidParams {
			t.Errorf("%q: %v; want %q", file, err, want)
		}
	}
	big := `{"corral_rules": 1, "rules": [` + strings.Repeat(`{},`, MaxImportRules) + `{}]}`
	if _, err := ParseRulesFile([]byte(big)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("too many rules: %v", err)
	}
}

func FuzzParseRulesFile(f *testing.F) {
	f.Add([]byte(`{"corral_rules": 1, "rules": [{"agent": "bot", "folder": "alice", "access": "execute", "target": "git status", "decision": "allow"}]}`))
	f.Add([]byte(`{"corral_rules": 1, "rules": [{"agent": "*", "folder": "*", "access": "read", "target": "/home/owner", "whole_folder": true, "decision": "allow", "expires": "2030-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"corral_rules":1,"rules":[],"rules":[]}`))
	f.Add([]byte("{\"corral_rules\": 1, \"rules\": [\n{\"note\": \"\\u202e\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseRulesFile(data)
		if err != nil {
			if e := errs.As(err); e.Kind != errs.InvalidParams && e.Kind != errs.TooLarge || e.Msg == "" {
				t.Fatalf("error %v", err)
			}
			return
		}
		q, st, _ := newHandPolicyTB(t)
		added, _, err := q.ImportRules(context.Background(), entries, "fuzz")
		if err != nil {
			if len(st.rules) != 0 || len(q.Rules()) != 0 {
				t.Fatalf("a refused import left rules: %v", st.rules)
			}
			return
		}
		for _, r := range q.Rules() {
			if r.Match == Prefix && r.Access != Execute && (r.Target == "/" || r.Target == "/home" || r.Target == "/home/owner") {
				t.Fatalf("folder-wide rule on %s imported", r.Target)
			}
			if r.Access == Execute && (r.Client == AnyClient || !validPrefix(r.Target)) {
				t.Fatalf("command rule %+v imported", r)
			}
		}
		if added > 0 {
			again, err := ParseRulesFile(q.ExportRules())
			if err != nil || len(again) != added {
				t.Fatalf("export of an import does not read back: %v %d/%d", err, len(again), added)
			}
		}
	})
}

func validPrefix(p string) bool {
	got, err := CheckCommandPrefix(p)
	return err == nil && got == p
}

// FuzzCommandPrefix: whatever the line, a rule covers it only if the line
// is plain words that start with the rule's words, and nothing the shell
// treats specially survives into a covered line outside quotes.
func FuzzCommandPrefix(f *testing.F) {
	for _, s := range []string{"git status", "git status; rm -rf ~", `sh -c "git status; rm -rf ~"`, "git status 'a;b'", "git status \"$(x)\"", "git\tstatus", "git status\n", "GIT=1 git status"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, ok := CommandWords(line)
		covered := commandCovers("git status", line)
		if covered && (!ok || len(words) < 2 || words[0] != "git" || words[1] != "status") {
			t.Fatalf("%q covered with words %q", line, words)
		}
		if !ok {
			return
		}
		// Outside quotes, a plain line holds only plain bytes, spaces and tabs.
		inS, inD := false, false
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case inS:
				inS = c != '\''
			case inD:
				if strings.ContainsRune("$`\\!", rune(c)) {
					t.Fatalf("%q: %q inside double quotes accepted", line, c)
				}
				inD = c != '"'
			case c == '\'':
				inS = true
			case c == '"':
				inD = true
			case c == ' ' || c == '\t' || plainByte(c):
			default:
				t.Fatalf("%q: byte %q accepted outside quotes", line, c)
			}
		}
		if strings.Contains(words[0], "=") {
			t.Fatalf("%q: an assignment taken as a command", line)
		}
	})
}

func TestLevels(t *testing.T) {
	for _, li := range Levels() {
		if got := LevelOf(li.AskCommands, li.Network, li.ReadOnly); got != li.Level {
			t.Errorf("LevelOf(%s's settings) = %s", li.Level, got)
		}
		if li.Label == "" || li.Explain == "" || li.Level.Label() != li.Label {
			t.Errorf("%+v", li)
		}
	}
	if LevelOf(false, "off", false) != LevelCustom || LevelCustom.Label() != "Custom" {
		t.Error("a mix of settings is not Custom")
	}
	for _, a := range []Access{Write, Delete, Execute, Network} {
		err := LevelReadOnly.Permits(a)
		if e := errs.As(err); err == nil || e.Kind != errs.Denied || !strings.Contains(e.Msg, "this agent is Read-only") || !strings.Contains(e.Msg, "trust level on the Agents page") {
			t.Errorf("Read-only %s: %v", a, err)
		}
		for _, l := range []Level{"", LevelAsk, LevelTrusted, LevelCustom} {
			if err := l.Permits(a); err != nil {
				t.Errorf("%q %s: %v", l, a, err)
			}
		}
	}
	if err := LevelReadOnly.Permits(Read); err != nil {
		t.Errorf("Read-only read: %v", err)
	}
}

// TestFolderRuleDoesNotAnswerForSecrets (red team): a folder-wide rule
// on a folder that merely holds secrets (/etc holds /etc/shadow, the
// home's .config holds browser profiles and gh's token) passed
// fileTarget's check, which looks at the folder, not at what is inside;
// then it answered for the secret without a question: an agent read
// /etc/shadow through a rule on /etc. A folder-wide allow must not answer
// for a secret (as an answer widened to a folder never covers one): the
// owner is asked, with the warning. A rule naming the file still does,
// and a deny rule still denies.
func TestFolderRuleDoesNotAnswerForSecrets(t *testing.T) {
	p, _, _ := newHandPolicy(t)
	ctx := context.Background()
	for _, target := range []string{"/etc", "/home/owner/.config"} {
		if _, err := p.AddRule(ctx, Draft{Client: "a", User: AnyClient, Access: Read, Target: target, Folder: true, Decision: EffectAllow}, "owner"); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel() // a request that would be asked is withdrawn at once
	for target, why := range map[string]string{
		"/etc/shadow":                          "system secrets",
		"/etc/ssh/ssh_host_ed25519_key":        "system secrets",
		"/home/owner/.config/gh/hosts.yml":     "GitHub credentials",
		"/home/owner/.config/chromium/Default": "a browser profile (saved passwords, cookies)",
	} {
		out, _ := p.Check(gone, Request{Client: "a", Scope: "owner", Access: Read, Target: target, Sensitive: why})
		if out.Allowed || out.By == audit.ByRule {
			t.Errorf("%s: a folder-wide rule answered for a secret: %+v", target, out)
		}
	}
	// Not a secret: the folder rule answers.
	if out, err := p.Check(gone, Request{Client: "a", Scope: "owner", Access: Read, Target: "/etc/hostname"}); err != nil || !out.Allowed || out.By != audit.ByRule {
		t.Errorf("/etc/hostname: %+v %v", out, err)
	}
	// A rule naming the secret itself answers; so does a deny rule.
	if _, err := p.AddRule(ctx, Draft{Client: "a", User: AnyClient, Access: Read, Target: "/etc/shadow", Decision: EffectAllow}, "owner"); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Check(gone, Request{Client: "a", Scope: "owner", Access: Read, Target: "/etc/shadow", Sensitive: "system secrets"}); err != nil || !out.Allowed || out.By != audit.ByRule {
		t.Errorf("/etc/shadow with its own rule: %+v %v", out, err)
	}
	if _, err := p.AddRule(ctx, Draft{Client: "a", User: AnyClient, Access: Read, Target: "/home/owner/.config/gh", Folder: false, Decision: EffectDeny}, "owner"); err != nil {
		t.Fatal(err)
	}
	if out, _ := p.Check(gone, Request{Client: "a", Scope: "owner", Access: Read, Target: "/home/owner/.config/gh", Sensitive: "GitHub credentials"}); out.Allowed || out.By != audit.ByRule {
		t.Errorf("deny rule on a secret: %+v", out)
	}
}
