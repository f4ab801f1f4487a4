package wire

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"corral/core/links"
	"corral/core/sandbox"
)

// TestSameStruct shows what the load-time check refuses: a wire type
// that lost, gained, renamed, reordered or retyped a field of its core
// type. Tags alone may differ.
func TestSameStruct(t *testing.T) {
	type core struct {
		Path  string
		Depth int
		Ctx   *sandbox.Context
		hid   bool
	}
	type good struct {
		Path  string           `json:"path" rpc:"required"`
		Depth int              `json:"depth"`
		Ctx   *sandbox.Context `json:"context"`
	}
	type paired struct {
		Path  string   `json:"path"`
		Depth int      `json:"depth"`
		Ctx   *Context `json:"context"`
	}
	type missing struct {
		Path  string `json:"path"`
		Depth int    `json:"depth"`
	}
	type renamed struct {
		Path  string           `json:"path"`
		Level int              `json:"depth"`
		Ctx   *sandbox.Context `json:"context"`
	}
	type retyped struct {
		Path  string           `json:"path"`
		Depth int64            `json:"depth"`
		Ctx   *sandbox.Context `json:"context"`
	}
	type reordered struct {
		Depth int              `json:"depth"`
		Path  string           `json:"path"`
		Ctx   *sandbox.Context `json:"context"`
	}
	type unpaired struct {
		Path  string   `json:"path"`
		Depth int      `json:"depth"`
		Ctx   *Version `json:"context"`
	}
	c := reflect.TypeFor[core]()
	for _, w := range []reflect.Type{reflect.TypeFor[good](), reflect.TypeFor[paired]()} {
		if err := sameStruct(w, c); err != nil {
			t.Errorf("%v: %v", w, err)
		}
	}
	for _, w := range []reflect.Type{reflect.TypeFor[missing](), reflect.TypeFor[renamed](), reflect.TypeFor[retyped](), reflect.TypeFor[reordered](), reflect.TypeFor[unpaired]()} {
		if err := sameStruct(w, c); err == nil {
			t.Errorf("%v passed as %v", w, c)
		}
	}
}

// TestRoundTrip fills every field of every core type with a value of its
// own, converts it to its wire type and back, and wants it unchanged: no
// field is dropped or crossed on the way.
func TestRoundTrip(t *testing.T) {
	for _, p := range pairs {
		n := 0
		v := reflect.New(p.core).Elem()
		fill(v, &n)
		w := reflect.New(p.wire).Elem()
		convert(w, v)
		back := reflect.New(p.core).Elem()
		convert(back, w)
		if got, want := dump(back), dump(v); got != want {
			t.Errorf("%v → %v → back:\n got %s\nwant %s", p.core, p.wire, got, want)
		}
		if w.IsZero() {
			t.Errorf("%v came out empty: %s", p.wire, dump(w))
		}
	}
	// nil and empty stay as they were.
	for _, r := range []sandbox.ListResult{{}, {Entries: nil}} {
		if w := Encode(r).(ListResult); w.Entries != nil {
			t.Errorf("nil entries became %#v", w.Entries)
		}
	}
	if w := Encode(sandbox.FindResult{Matches: []string{}}).(FindResult); w.Matches == nil {
		t.Error("empty matches became nil")
	}
}

// fill sets every exported field under v to a value of its own.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(*n), 0).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	}
}

// TestCoreHasNoWireTags keeps the wire names here: a JSON tag or
// rpc:"required" in core would be a second definition of the protocol.
// The private encodings core reads and writes itself are allowed: they are
// not the protocol.
func TestCoreHasNoWireTags(t *testing.T) {
	private := map[string]bool{
		"docread/helper.go":    true, // the document helper's header line
		"execbox/run_linux.go": true, // bubblewrap's --info-fd
		"words/words.go":       true, // the word table as the dashboard's words.js module, generated at build time
		"policy/transfer.go":   true, // the rules file (rule.export, rule.import), a file format
	}
	root := filepath.Join("..", "..", "core")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if (strings.Contains(line, "`json:\"") || strings.Contains(line, `rpc:"`)) && !private[filepath.ToSlash(rel)] {
				t.Errorf("core/%s:%d: %s (declare the wire form in app/wire)", filepath.ToSlash(rel), i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnpairedPanics: a core struct without a wire type is a mistake
// that would put Go's field names on the wire, so it stops the call.
func TestUnpairedPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Decode": func() { Decode[links.LinkArgs]([]byte(`{"path":"a"}`)) },
		"Encode": func() { Encode([]links.Link{{}}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of an unpaired core type did not panic", name)
				}
			}()
			f()
		}()
	}
	if got := Encode(map[string]any{"a": 1}); got == nil {
		t.Error("a value of no core type did not pass through")
	}
	if _, err := Decode[struct{}]([]byte(`{}`)); err != nil {
		t.Error(err)
	}
}
