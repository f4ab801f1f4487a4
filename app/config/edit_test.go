package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// defaultText is the config a first start writes.
func defaultText() []byte {
	return []byte(fmt.Sprintf(defaultTemplate, "me", "me", "0123456789abcdef0123456789", "me"))
}

func TestSetKeyEditsOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, in, table, key, value, want string
	}{
		{"replace keeps the comment", "[server]\nlan = false   # the LAN\n", "server", "lan", "true",
			"[server]\nlan = true   # the LAN\n"},
		{"after the commented default", "[server]\n# lan = false   # the LAN\nx = 1\n", "server", "lan", "true",
			"[server]\n# lan = false   # the LAN\nlan = true\nx = 1\n"},
		{"after the table's last key", "[exec]\ntimeout = \"2m\"\n\n[audit]\n", "exec", "max_running", "3",
			"[exec]\ntimeout = \"2m\"\nmax_running = 3\n\n[audit]\n"},
		{"under the header of an empty table", "[links]\n\n[audit]\n", "links", "expiry", `"1h"`,
			"[links]\nexpiry = \"1h\"\n\n[audit]\n"},
		{"a missing table at the end", "[audit]\nretention = \"3h\"", "server", "lan", "true",
			"[audit]\nretention = \"3h\"\n\n[server]\nlan = true\n"},
		{"a multi-line list replaced whole", "[exec]\nallow_private = [\n  \"a:1\", # x\n]  # hosts\nenabled = true\n", "exec", "allow_private", `["b:2"]`,
			"[exec]\nallow_private = [\"b:2\"]  # hosts\nenabled = true\n"},
		{"not the same key of another table", "[audit]\nretention = \"3h\"\n[versions]\nretention = \"30d\"\n", "versions", "retention", `"2d"`,
			"[audit]\nretention = \"3h\"\n[versions]\nretention = \"2d\"\n"},
		{"not inside an array of tables", "[sandbox]\nstrict = true\n[[sandbox.roots]]\npath = \"/x\"\n", "sandbox", "approval_timeout", `"5m"`,
			"[sandbox]\nstrict = true\napproval_timeout = \"5m\"\n[[sandbox.roots]]\npath = \"/x\"\n"},
		{"not a look-alike in a multi-line string", "[users]\n[server]\nx = \"\"\"\nlan = 1\n[audit]\n\"\"\"\n", "server", "lan", "true",
			"[users]\n[server]\nx = \"\"\"\nlan = 1\n[audit]\n\"\"\"\nlan = true\n"},
		{"CRLF kept", "[server]\r\nlan = false\r\nx = 1\r\n", "server", "listen", `"0.0.0.0:1"`,
			"[server]\r\nlan = false\r\nx = 1\r\nlisten = \"0.0.0.0:1\"\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SetKey([]byte(tc.in), tc.table, tc.key, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestSetKeyRefusesWhatItCannotFollow(t *testing.T) {
	for _, tc := range []struct{ name, in, table, key string }{
		{"does not parse", "[server\nlan = 1", "server", "lan"},
		{"dotted key at the root", "server.lan = false\n", "server", "lan"},
		{"inline table", "server = { lan = false }\n", "server", "lan"},
		{"quoted key", "[server]\n\"lan\" = false\n", "server", "lan"},
		{"array of tables", "[[server]]\nlan = false\n", "server", "lan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := SetKey([]byte(tc.in), tc.table, tc.key, "true"); err == nil {
				t.Errorf("accepted, wrote %q", out)
			}
		})
	}
	if _, err := SetKey([]byte("[server]\n"), "server", "lan", "true\nx = 1"); err == nil {
		t.Error("a value of two lines was accepted")
	}
	if _, err := SetKey([]byte("[server]\n"), "server", "a.b", "true"); err == nil {
		t.Error("a dotted key was accepted")
	}
}

// TestSetKeyOnTheDefaultConfig: every key a home user changes, set on the
// config a first start writes, changes only that key's line (one line
// added) and keeps every comment.
func TestSetKeyOnTheDefaultConfig(t *testing.T) {
	in := defaultText()
	for _, kv := range [][2]string{
		{"server.lan", "true"}, {"server.listen", `"127.0.0.1:9000"`}, {"sandbox.approval_timeout", `"5m"`},
		{"sandbox.strict", "false"}, {"exec.timeout", `"10m"`}, {"exec.max_memory_mb", "4096"},
		{"exec.allow_private", `["192.168.1.2:80"]`}, {"versions.retention", `"7d"`}, {"links.expiry", `"1h"`},
		{"audit.retention", `"48h"`},
	} {
		table, key, _ := strings.Cut(kv[0], ".")
		out, err := SetKey(in, table, key, kv[1])
		if err != nil {
			t.Fatalf("%s: %v", kv[0], err)
		}
		inLines, outLines := strings.Split(string(in), "\n"), strings.Split(string(out), "\n")
		if len(outLines) != len(inLines)+1 {
			t.Fatalf("%s: %d lines became %d", kv[0], len(inLines), len(outLines))
		}
		added := 0
		for i, j := 0, 0; i < len(inLines); j++ {
			if inLines[i] == outLines[j] {
				i++
				continue
			}
			added++
			if outLines[j] != key+" = "+kv[1] {
				t.Errorf("%s: added line %q", kv[0], outLines[j])
			}
		}
		if added > 1 {
			t.Errorf("%s: %d lines added", kv[0], added)
		}
		c, err := Parse("config.toml", out, "/home/me", "/data/sandbox")
		if err != nil {
			t.Fatalf("%s: %v", kv[0], err)
		}
		if _, ok := c.Value(kv[0]); !ok {
			t.Errorf("Value(%s) not found", kv[0])
		}
		// Setting it again edits the line just added, in place.
		again, err := SetKey(out, table, key, kv[1])
		if err != nil || string(again) != string(out) {
			t.Errorf("%s: setting the same value again changed the text (%v)", kv[0], err)
		}
	}
	c, _ := Parse("config.toml", in, "/home/me", "/data/sandbox")
	if v, _ := c.Value("sandbox.approval_timeout"); v != 2*time.Minute {
		t.Errorf("Value(sandbox.approval_timeout) = %v", v)
	}
}

func TestLiteral(t *testing.T) {
	for v, want := range map[any]string{true: "true", int64(8): "8", "5m": `"5m"`, "a\"b\\\n": `"a\"b\\\u000A"`} {
		got, err := Literal(v)
		if err != nil || got != want {
			t.Errorf("Literal(%v) = %q, %v; want %q", v, got, err, want)
		}
	}
	if got, err := Literal([]string{"a:1", `b"'`}); err != nil || got != `["a:1", "b\"'"]` {
		t.Errorf("Literal(list) = %q, %v", got, err)
	}
	// Every literal reads back as what it was made of.
	for _, v := range []any{"x\u202e\x00\t\"y", []string{}, []string{"\\", "é"}, int64(-3), 2.5, false} {
		lit, err := Literal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := toml.Unmarshal([]byte("v = "+lit), &got); err != nil {
			t.Fatalf("%q: %v", lit, err)
		}
		want := v
		if l, ok := v.([]string); ok {
			w := []any{}
			for _, e := range l {
				w = append(w, e)
			}
			want = w
		}
		if !reflect.DeepEqual(got["v"], want) {
			t.Errorf("Literal(%#v) = %s reads back as %#v", v, lit, got["v"])
		}
	}
}

// FuzzSetKey: hostile config text never makes the editor panic, and what
// it writes parses to the same values except the key, which holds the
// new value.
func FuzzSetKey(f *testing.F) {
	f.Add(defaultText(), "server", "lan", "true")
	full, _ := os.ReadFile(filepath.Join("testdata", "valid-full.toml"))
	f.Add(full, "sandbox", "approval_timeout", `"5m"`)
	f.Add([]byte("[exec]\nallow_private = [\n'a:1', # ]\n]\n"), "exec", "allow_private", `["x:1"]`)
	f.Add([]byte("a = \"\"\"\n[server]\nlan = 1\n\"\"\"\n"), "server", "lan", "false")
	f.Add([]byte("[server]\r\nlan = true # c\r\n"), "server", "lan", "false")
	f.Add([]byte("x = '''\n'''\n[server]\nlan = [1, [2,\n3]]\n"), "server", "lan", "1")
	f.Fuzz(func(t *testing.T, data []byte, table, key, value string) {
		if len(data) > 1<<16 {
			return
		}
		out, err := SetKey(data, table, key, value)
		if err != nil {
			return
		}
		var before, after map[string]any
		if toml.Unmarshal(data, &before) != nil {
			t.Fatalf("edited a file that does not parse: %q", data)
		}
		if err := toml.Unmarshal(out, &after); err != nil {
			t.Fatalf("wrote text that does not parse: %v\n%q", err, out)
		}
		var probe map[string]any
		if toml.Unmarshal([]byte("v = "+value), &probe) != nil {
			t.Fatalf("accepted value %q", value)
		}
		tab, _ := after[table].(map[string]any)
		if !reflect.DeepEqual(tab[key], probe["v"]) {
			t.Fatalf("%s.%s = %v, want %v", table, key, tab[key], probe["v"])
		}
		delete(tab, key)
		if bt, ok := before[table].(map[string]any); ok {
			delete(bt, key)
			if len(bt) == 0 {
				delete(before, table)
			}
		}
		if len(tab) == 0 {
			delete(after, table)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other values changed:\n%v\n%v", before, after)
		}
	})
}

func BenchmarkSetKey(b *testing.B) {
	in := defaultText()
	for b.Loop() {
		if _, err := SetKey(in, "sandbox", "approval_timeout", `"5m"`); err != nil {
			b.Fatal(err)
		}
	}
}
