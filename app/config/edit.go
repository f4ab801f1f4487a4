package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// SetKey returns data with one key of one standard table set to value (a
// TOML value as written, e.g. `"5m"`, `true`, `8`): the key's line is
// edited in place, its value replaced and whatever follows it on the line
// (a comment) kept; a key not set is added under its table, after the
// commented default line ("# key = …") when there is one, else after the
// table's last key; a table not in the file is added at its end. Every
// other byte of data is kept as it was: the file is never re-serialised.
//
// Guarantees: the result parses, and to the same values as data except
// for table.key, which holds value; otherwise SetKey returns an error and
// no text (a file that does not parse, a key written in a form this
// editor does not follow such as a dotted or quoted key, a table defined
// only through dotted keys). Any input is safe: none makes it panic.
//
// Not guaranteed: value is not validated beyond being TOML (Parse
// validates the result).
func SetKey(data []byte, table, key, value string) ([]byte, error) {
	if !bareKey(table) || !bareKey(key) {
		return nil, fmt.Errorf("config: %q.%q is not a plain table and key", table, key)
	}
	var before map[string]any
	if err := toml.Unmarshal(data, &before); err != nil {
		return nil, fmt.Errorf("config.toml does not parse as it is: %w", err)
	}
	var want any
	var probe map[string]any
	if err := toml.Unmarshal([]byte("v = "+value), &probe); err != nil || strings.ContainsAny(value, "\r\n") {
		return nil, fmt.Errorf("config: %s is not a TOML value", value)
	}
	want = probe["v"]
	out := setKey(data, table, key, value)
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("config: %s.%s cannot be written into this file without rewriting it; edit it by hand (%v)", table, key, err)
	}
	t, _ := before[table].(map[string]any)
	if _, exists := before[table]; exists && t == nil {
		return nil, fmt.Errorf("config: %s is not a table in this file; edit it by hand", table)
	}
	expect := make(map[string]any, len(before)+1)
	for k, v := range before {
		expect[k] = v
	}
	nt := make(map[string]any, len(t)+1)
	for k, v := range t {
		nt[k] = v
	}
	nt[key] = want
	expect[table] = nt
	if !reflect.DeepEqual(expect, after) {
		return nil, errors.New("config: " + table + "." + key + " is written in a way this editor does not follow; edit it by hand")
	}
	return out, nil
}

func bareKey(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// line is one line of the file as the scanner sees it.
type line struct {
	start, end int  // data[start:end] is the line without its newline
	structural bool // it starts outside any string, array or inline table
}

// lines splits data into lines, marking those that begin outside a
// multi-line string, an array or an inline table: only those can hold a
// table header or a key.
func lines(data []byte) []line {
	var out []line
	st := scanState{}
	start := 0
	structural := true
	for i := 0; i <= len(data); i++ {
		if i == len(data) || data[i] == '\n' {
			out = append(out, line{start: start, end: i, structural: structural})
			if i < len(data) {
				st.step(data, i) // a newline ends a comment
			}
			start = i + 1
			structural = st.mode == modeNormal && st.depth == 0
			continue
		}
		i = st.step(data, i)
	}
	return out
}

const (
	modeNormal = iota
	modeComment
	modeBasic    // "…"
	modeLiteral  // '…'
	modeMLBasic  // """…"""
	modeMLLitera // '''…'''
)

// scanState follows strings, comments and brackets through TOML text.
type scanState struct {
	mode  int
	depth int // [ and { open in values
}

// step consumes data[i] (and what belongs to it) and returns the index of
// the last byte it consumed.
func (s *scanState) step(data []byte, i int) int {
	c := data[i]
	has := func(p string) bool { return bytes.HasPrefix(data[i:], []byte(p)) }
	switch s.mode {
	case modeComment:
		if c == '\n' {
			s.mode = modeNormal
		}
	case modeBasic:
		switch c {
		case '\\':
			if i+1 < len(data) && data[i+1] != '\n' {
				return i + 1
			}
		case '"', '\n':
			s.mode = modeNormal
		}
	case modeLiteral:
		if c == '\'' || c == '\n' {
			s.mode = modeNormal
		}
	case modeMLBasic:
		if c == '\\' && i+1 < len(data) && data[i+1] != '\n' {
			return i + 1
		}
		if has(`"""`) {
			s.mode = modeNormal
			return i + 2
		}
	case modeMLLitera:
		if has(`'''`) {
			s.mode = modeNormal
			return i + 2
		}
	default:
		switch {
		case c == '#':
			s.mode = modeComment
		case has(`"""`):
			s.mode = modeMLBasic
			return i + 2
		case has(`'''`):
			s.mode = modeMLLitera
			return i + 2
		case c == '"':
			s.mode = modeBasic
		case c == '\'':
			s.mode = modeLiteral
		case c == '[' || c == '{':
			s.depth++
		case c == ']' || c == '}':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
	return i
}

// valueEnd returns where the value that starts at i ends: before the
// first comment or newline met outside strings and brackets, trailing
// blanks left out.
func valueEnd(data []byte, i int) int {
	st := scanState{}
	j := i
	for ; j < len(data); j++ {
		if st.mode == modeNormal && st.depth == 0 && (data[j] == '#' || data[j] == '\n' || data[j] == '\r') {
			break
		}
		j = st.step(data, j)
	}
	if j > len(data) {
		j = len(data)
	}
	for j > i && (data[j-1] == ' ' || data[j-1] == '\t') {
		j--
	}
	return j
}

// header returns the table a structural line opens: its name and whether
// it is an array of tables; ok false when the line is no header.
func header(text string) (name string, array, ok bool) {
	if m := arrayRe.FindStringSubmatch(text); m != nil {
		return m[1], true, true
	}
	if m := tableRe.FindStringSubmatch(text); m != nil {
		return m[1], false, true
	}
	if strings.HasPrefix(strings.TrimSpace(text), "[") {
		return "", false, true // a header this editor does not read (quoted names …)
	}
	return "", false, false
}

func setKey(data []byte, table, key, value string) []byte {
	ls := lines(data)
	cur, curArray := "", false
	found := false
	at := -1         // line after which to add the key
	commented := -1  // the "# key = …" line in the table
	lastKey := -1    // the table's last key line
	headerLine := -1 // the table's header
	for n, l := range ls {
		if !l.structural {
			continue
		}
		text := string(data[l.start:l.end])
		if name, array, ok := header(text); ok {
			cur, curArray = name, array
			if cur == table && !curArray {
				found, headerLine = true, n
			}
			continue
		}
		if cur != table || curArray {
			continue
		}
		if m := keyRe.FindStringSubmatchIndex(text); m != nil {
			if text[m[2]:m[3]] == key {
				eq := l.start + m[1]
				vs := eq
				for vs < len(data) && (data[vs] == ' ' || data[vs] == '\t') {
					vs++
				}
				ve := valueEnd(data, vs)
				sep := data[eq:vs]
				if len(sep) == 0 {
					sep = []byte(" ")
				}
				out := make([]byte, 0, len(data)+len(value))
				out = append(out, data[:eq]...)
				out = append(out, sep...)
				out = append(out, value...)
				return append(out, data[ve:]...)
			}
			lastKey = n
			continue
		}
		if m := commentedKeyRe.FindStringSubmatch(text); m != nil && m[1] == key && commented < 0 {
			commented = n
		}
	}
	newLine := key + " = " + value
	switch {
	case !found:
		out := append([]byte{}, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		return append(out, "["+table+"]\n"+newLine+"\n"...)
	case commented >= 0:
		at = commented
	case lastKey >= 0:
		at = lastKey
		// after a multi-line value, which ends on a later line
		for at+1 < len(ls) && !ls[at+1].structural {
			at++
		}
	default:
		at = headerLine
	}
	l := ls[at]
	nl := "\n"
	if l.end > l.start && data[l.end-1] == '\r' {
		nl = "\r\n"
	}
	out := make([]byte, 0, len(data)+len(newLine)+2)
	if l.end == len(data) { // the last line, without a newline
		out = append(out, data...)
		out = append(out, nl...)
		out = append(out, newLine...)
		return append(out, nl...)
	}
	out = append(out, data[:l.end+1]...)
	out = append(out, newLine...)
	out = append(out, nl...)
	return append(out, data[l.end+1:]...)
}

var commentedKeyRe = regexp.MustCompile(`^\s*#\s*([A-Za-z0-9_-]+)\s*=`)

// Literal writes v as a TOML value for SetKey: a string (durations are
// strings) in double quotes, a bool, an integer, a float or a list of
// strings, always on one line.
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return Quote(x), nil
	case []string:
		q := make([]string, len(x))
		for i, e := range x {
			q[i] = Quote(e)
		}
		return "[" + strings.Join(q, ", ") + "]", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		b, err := toml.Marshal(map[string]any{"v": x})
		if err != nil {
			return "", err
		}
		return strings.TrimPrefix(strings.TrimSpace(string(b)), "v = "), nil
	}
	return "", fmt.Errorf("config: %v (%T) cannot be written as a setting", v, v)
}

// Quote writes s as a TOML basic string: config.toml's values here, and
// the Codex config entry app/connect writes.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Value returns the value of a "table.key" of c as config.toml names it
// (durations as time.Duration, lists as []string); ok false for a key
// that is not a single value of a standard table.
func (c *Config) Value(dotted string) (v any, ok bool) {
	table, key, found := strings.Cut(dotted, ".")
	if !found {
		return nil, false
	}
	sec, ok := field(reflect.ValueOf(c).Elem(), table)
	if !ok || sec.Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := field(sec, key)
	if !ok {
		return nil, false
	}
	switch x := f.Interface().(type) {
	case Duration:
		return x.D(), true
	case []string:
		return append([]string{}, x...), true
	case bool, string, int, int64, float64:
		return x, true
	}
	return nil, false
}

func field(v reflect.Value, tag string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("toml") == tag {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
