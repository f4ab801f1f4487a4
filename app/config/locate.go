package config

import (
	"regexp"
	"strconv"
	"strings"
)

// locator maps dotted keys as validate names them ("users[1].id",
// "sandbox.roots[0].path", "server.listen") to line numbers, so that
// validation errors can point into the file like parse errors do.
type locator map[string]int

var (
	tableRe = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)
	arrayRe = regexp.MustCompile(`^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]`)
	keyRe   = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`)
)

func newLocator(data []byte) locator {
	l := locator{}
	table := ""
	counts := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if m := arrayRe.FindStringSubmatch(line); m != nil {
			idx := counts[m[1]]
			counts[m[1]]++
			table = m[1] + "[" + strconv.Itoa(idx) + "]"
			l[table] = n
			continue
		}
		if m := tableRe.FindStringSubmatch(line); m != nil {
			table = m[1]
			l[table] = n
			continue
		}
		if m := keyRe.FindStringSubmatch(line); m != nil {
			k := m[1]
			if table != "" {
				k = table + "." + k
			}
			if _, seen := l[k]; !seen {
				l[k] = n
			}
		}
	}
	return l
}

// line returns the line of key, else of its closest enclosing table, else 0.
func (l locator) line(key string) int {
	for key != "" {
		if n, ok := l[key]; ok {
			return n
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// keyAt returns the key defined on line n, or "".
func (l locator) keyAt(n int) string {
	for k, line := range l {
		if line == n && !strings.HasSuffix(k, "]") {
			return k
		}
	}
	return ""
}
