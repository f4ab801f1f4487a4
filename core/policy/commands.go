package policy

import (
	"strings"

	"corral/core/errs"
)

// Command-prefix rules (docs/protocol.md section 6, rule.add): a rule on
// execute with match "prefix" holds a few plain words, such as
// "git status", and covers a command line whose words start with exactly
// those words. Commands run as `/bin/sh -c LINE`, so a line is only
// split into words when the shell would do nothing to it but split it:
// any character that makes the shell chain, substitute, expand or
// redirect (";", "&", "|", "$", "`", "<", ">", "(", ")", "*", "?", "[",
// "~", "{", "}", "#", "!", a backslash, a newline …) outside quotes makes
// the line a script, which no command rule covers: it is asked as
// before. Quoted words are taken literally: single quotes as the shell
// does, double quotes only when they hold none of "$", "`", "\" or "!".

// MaxCommandWords bounds the words of a command rule.
const MaxCommandWords = 16

// plainByte reports whether c may appear unquoted in a plain word.
func plainByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-_./:=@%+,", c) >= 0
}

// CommandWords splits a command line into the words /bin/sh would run,
// or reports false when the shell would do more than split it (see
// above). Words are separated by spaces or tabs.
func CommandWords(line string) ([]string, bool) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			i++
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			w.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, false
			}
			q := line[i+1 : i+1+end]
			if strings.ContainsAny(q, "$`\\!") {
				return nil, false
			}
			w.WriteString(q)
			inWord = true
			i += end + 2
		case plainByte(c):
			w.WriteByte(c)
			inWord = true
			i++
		default:
			return nil, false
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, false
	}
	// A first word with "=" is a variable assignment: the command is the
	// next word, run with a changed environment.
	if strings.Contains(words[0], "=") {
		return nil, false
	}
	return words, true
}

// wrappers run the rest of their line as another command, or a script:
// a rule starting with one of them would cover any command at all.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "csh": true, "tcsh": true, "busybox": true,
	"env": true, "exec": true, "eval": true, "command": true, "builtin": true, "xargs": true, "sudo": true, "su": true, "doas": true,
	"nohup": true, "timeout": true, "nice": true, "ionice": true, "time": true, "watch": true, "setsid": true, "stdbuf": true,
	"chroot": true, "unshare": true, "nsenter": true, "flock": true, "script": true, "parallel": true, ".": true, "source": true,
}

// CheckCommandPrefix validates the words of a command rule and returns
// them in their one spelling: plain words separated by one space.
func CheckCommandPrefix(prefix string) (string, error) {
	words, ok := CommandWords(strings.TrimSpace(prefix))
	if !ok {
		return "", errs.New(errs.InvalidParams, "", "A command rule is a few plain words, such as \"git status\" or \"npm test\": no ; & | $ ` < > ( ) * ? ~ or other shell signs.")
	}
	if len(words) > MaxCommandWords {
		return "", errs.New(errs.InvalidParams, "", "A command rule has at most %d words.", MaxCommandWords)
	}
	for _, w := range words {
		if w == "" || !plainWord(w) {
			return "", errs.New(errs.InvalidParams, "", "A command rule's words use letters, digits and - _ . / : = @ %% + , only (no spaces or quotes inside a word).")
		}
	}
	base := words[0][strings.LastIndexByte(words[0], '/')+1:]
	if wrappers[base] {
		return "", errs.New(errs.InvalidParams, "", "A command rule cannot start with %q: it runs whatever follows it, so the rule would cover any command. Name the command itself, such as \"git status\".", words[0])
	}
	return strings.Join(words, " "), nil
}

func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if !plainByte(w[i]) {
			return false
		}
	}
	return true
}

// commandCovers reports whether the command line starts with the words
// of prefix (a checked prefix: plain words, one space apart).
func commandCovers(prefix, line string) bool {
	words, ok := CommandWords(line)
	if !ok {
		return false
	}
	want := strings.Split(prefix, " ")
	if len(words) < len(want) {
		return false
	}
	for i, w := range want {
		if words[i] != w {
			return false
		}
	}
	return true
}
