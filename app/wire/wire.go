// Package wire is the JSON form of the parameters and results of Corral's
// methods whose Go types live in core: core keeps its operation arguments
// and results as plain Go types, and this package declares each one again
// with its JSON tags, `rpc:"required"` marks (docs/protocol.md names) and the
// descriptions MCP's tools show (`jsonschema` tags). It is the one
// declaration of each method's params: the WebSocket decodes them (Decode),
// MCP's tools take them as their arguments, their input schemas made from
// them, and hand them to the method decoded (From), and the CLI sends
// them. It also declares, once, the results that MCP's output schemas or
// the CLI read (session.info's in session.go, the links' in links.go,
// approval.list's): the packages that build them name them by alias.
//
// It guarantees:
//   - every wire type has exactly the exported fields of its core type, in
//     the same order, of the same types or of types paired here in turn;
//     the pairs are checked when the package loads, so a field added to
//     one side only stops every program and test that uses it;
//   - Decode and Encode convert between the two by field, so a value
//     crosses unchanged (nil stays nil, empty stays empty);
//   - the JSON of a result is the bytes Corral wrote when core carried the
//     tags itself (testdata/golden.txt pins them).
//
// Go's struct conversion would make the first check at compile time, but
// only between structs whose nested named types are identical, and
// nearly every argument holds a *sandbox.Context; so the check runs at
// load, over every pair, the nested ones included.
//
// Not guaranteed: Encode converts a core value, or a slice of or pointer
// to one, and leaves anything else as it is; a result app/server builds
// around a core value converts that value itself (To).
package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"corral/app/rpc"
	"corral/core/applypatch"
	"corral/core/audit"
	"corral/core/commands"
	"corral/core/documents"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/links"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/core/versions"
)

// pairs lists every wire type with the core type it stands for; a pair
// may use another pair's types in its fields.
var pairs = []typePair{
	pair[Context, sandbox.Context](),
	pair[ReadArgs, sandbox.ReadArgs](),
	pair[WriteArgs, sandbox.WriteArgs](),
	pair[WriteResult, sandbox.WriteResult](),
	pair[EditArgs, sandbox.EditArgs](),
	pair[EditResult, sandbox.EditResult](),
	pair[DeleteArgs, sandbox.DeleteArgs](),
	pair[PathResult, sandbox.PathResult](),
	pair[MoveArgs, sandbox.MoveArgs](),
	pair[MoveResult, sandbox.MoveResult](),
	pair[FolderArgs, sandbox.FolderArgs](),
	pair[FolderResult, sandbox.FolderResult](),
	pair[StatArgs, sandbox.StatArgs](),
	pair[ListArgs, sandbox.ListArgs](),
	pair[ListResult, sandbox.ListResult](),
	pair[FindArgs, sandbox.FindArgs](),
	pair[FindResult, sandbox.FindResult](),
	pair[GrepArgs, sandbox.GrepArgs](),
	pair[GrepResult, sandbox.GrepResult](),
	pair[PatchArgs, applypatch.PatchArgs](),
	pair[PatchFile, applypatch.PatchFile](),
	pair[PatchResult, applypatch.PatchResult](),
	pair[RunArgs, commands.RunArgs](),
	pair[RunResult, commands.RunResult](),
	pair[Running, commands.Running](),
	pair[FileChange, commands.FileChange](),
	pair[NotApplied, commands.NotApplied](),
	pair[ResultArgs, links.ResultArgs](),
	pair[UndoArgs, undo.UndoArgs](),
	pair[UndoFile, undo.UndoFile](),
	pair[UndoResult, undo.UndoResult](),
	pair[UndoFolder, undo.UndoFolder](),
	pair[RestoreArgs, undo.RestoreArgs](),
	pair[HistoryArgs, undo.HistoryArgs](),
	pair[Version, undo.Version](),
	pair[HistoryResult, undo.HistoryResult](),
	pair[ChangesArgs, undo.ChangesArgs](),
	pair[ChangesResult, undo.ChangesResult](),
	pair[UndoClientArgs, undo.UndoClientArgs](),
	pair[UndoClientResult, undo.UndoClientResult](),
	pair[DocumentReadArgs, documents.DocumentReadArgs](),
	pair[DocumentResult, documents.DocumentResult](),
	pair[Info, fsbox.Info](),
	pair[Match, fsbox.Match](),
	pair[Replacement, fsbox.Replacement](),
	pair[Bundle, netgate.Bundle](),
	pair[Refusal, netgate.Refusal](),
	pair[Summary, netgate.Summary](),
	pair[AgentUsage, versions.AgentUsage](),
	pair[Usage, versions.Usage](),
	pair[ForgetArgs, undo.ForgetArgs](),
	pair[ForgetResult, undo.ForgetResult](),
	pair[Event, audit.Event](),
	pair[Change, audit.Change](),
	pair[Page, audit.Page](),
	pair[Bucket, audit.Bucket](),
	pair[Approval, policy.Approval](),
	pair[Choice, policy.Choice](),
	pair[Rule, policy.Rule](),
}

type typePair struct{ wire, core reflect.Type }

func pair[W, C any]() typePair { return typePair{reflect.TypeFor[W](), reflect.TypeFor[C]()} }

// Filled by init and only read after it.
var (
	toWire = map[reflect.Type]reflect.Type{} // core type → wire type
	fields = map[reflect.Type][]int{}        // a paired type → its exported fields' indexes
)

func init() {
	for _, p := range pairs {
		toWire[p.core] = p.wire
		fields[p.core], fields[p.wire] = exported(p.core), exported(p.wire)
	}
	for _, p := range pairs {
		if err := sameStruct(p.wire, p.core); err != nil {
			panic("wire: " + err.Error())
		}
	}
}

// sameStruct reports how wire type w differs from core type c: their
// exported fields must match one to one, by name and type (see same).
func sameStruct(w, c reflect.Type) error {
	wf, cf := exported(w), exported(c)
	if len(wf) != w.NumField() {
		return fmt.Errorf("%v has unexported fields", w)
	}
	if len(wf) != len(cf) {
		return fmt.Errorf("%v has %d fields, %v has %d", w, len(wf), c, len(cf))
	}
	for i := range wf {
		a, b := w.Field(wf[i]), c.Field(cf[i])
		if a.Name != b.Name {
			return fmt.Errorf("field %d of %v is %s, of %v %s", i, w, a.Name, c, b.Name)
		}
		if err := same(a.Type, b.Type); err != nil {
			return fmt.Errorf("%v.%s: %w", w, a.Name, err)
		}
	}
	return nil
}

// same reports whether a wire field of type w can hold a core field of
// type c: the same type, a pair, or pointers, slices or maps of those.
func same(w, c reflect.Type) error {
	if w == c || toWire[c] == w {
		return nil
	}
	if w.Kind() == c.Kind() {
		switch w.Kind() {
		case reflect.Pointer, reflect.Slice:
			return same(w.Elem(), c.Elem())
		case reflect.Map:
			if w.Key() == c.Key() {
				return same(w.Elem(), c.Elem())
			}
		}
	}
	return fmt.Errorf("%v cannot hold %v", w, c)
}

func exported(t reflect.Type) []int {
	var idx []int
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			idx = append(idx, i)
		}
	}
	return idx
}

// Decode reads a method's params as A: through A's wire type when A is a
// core type, with rpc.DecodeParams' checks (unknown names, wrong types,
// missing required parameters).
func Decode[A any](params json.RawMessage) (A, error) {
	var a A
	w, ok := toWire[reflect.TypeFor[A]()]
	if !ok {
		unpaired(reflect.TypeFor[A]())
		err := rpc.DecodeParams(params, &a)
		return a, err
	}
	p := reflect.New(w)
	if err := rpc.DecodeParams(params, p.Interface()); err != nil {
		return a, err
	}
	convert(reflect.ValueOf(&a).Elem(), p.Elem())
	return a, nil
}

// From returns v, a method's params already decoded (MCP hands its
// tools' arguments over so, as the wire type the method declares), as A:
// v itself when it is an A, or converted field by field when it is A's
// wire type. Anything else is a mistake in Corral and says so.
func From[A any](v any) (A, error) {
	var a A
	if x, ok := v.(A); ok {
		return x, nil
	}
	t := reflect.TypeOf(v)
	if t == nil || toWire[reflect.TypeFor[A]()] != t {
		return a, errs.New(errs.IO, "", "Corral handed this method parameters of the wrong type (%v); the call was not made.", t)
	}
	convert(reflect.ValueOf(&a).Elem(), reflect.ValueOf(v))
	return a, nil
}

// Encode returns v in its wire form: a core result (or a slice of or
// pointer to one) as its wire type, file.read's result as docs/protocol.md's
// shape for its type, and anything else as it is.
func Encode(v any) any {
	if r, ok := v.(fsbox.ReadResult); ok {
		return Read(r)
	}
	t := reflect.TypeOf(v)
	if t == nil {
		return v
	}
	w := wireType(t)
	if w == t {
		unpaired(t)
		return v
	}
	out := reflect.New(w).Elem()
	convert(out, reflect.ValueOf(v))
	return out.Interface()
}

// To converts v, a core value, into W, its wire type, or a wire value
// into W, its core type.
func To[W any](v any) W {
	var w W
	convert(reflect.ValueOf(&w).Elem(), reflect.ValueOf(v))
	return w
}

// unpaired panics for a core struct (or a slice of or pointer to one)
// without a wire type: its JSON would carry Go's field names.
func unpaired(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && strings.HasPrefix(t.PkgPath(), "corral/core/") {
		panic(fmt.Sprintf("wire: %v has no wire type; declare one in app/wire", t))
	}
}

// wireType is t's wire type: t's pair, or a pointer to or slice of one;
// t itself for anything else.
func wireType(t reflect.Type) reflect.Type {
	if w, ok := toWire[t]; ok {
		return w
	}
	switch t.Kind() {
	case reflect.Pointer:
		if e := wireType(t.Elem()); e != t.Elem() {
			return reflect.PointerTo(e)
		}
	case reflect.Slice:
		if e := wireType(t.Elem()); e != t.Elem() {
			return reflect.SliceOf(e)
		}
	}
	return t
}

// convert sets dst to src, field by field between paired types (init
// checked that their shapes match).
func convert(dst, src reflect.Value) {
	st, dt := src.Type(), dst.Type()
	if st == dt {
		dst.Set(src)
		return
	}
	if st.ConvertibleTo(dt) && st.Kind() == dt.Kind() {
		// The same type, or one that differs only in tags.
		dst.Set(src.Convert(dt))
		return
	}
	switch st.Kind() {
	case reflect.Struct:
		sf, df := fields[st], fields[dt]
		if sf == nil || df == nil {
			panic(fmt.Sprintf("wire: %v and %v are not a pair", st, dt))
		}
		for i := range sf {
			convert(dst.Field(df[i]), src.Field(sf[i]))
		}
	case reflect.Pointer:
		if !src.IsNil() {
			p := reflect.New(dt.Elem())
			convert(p.Elem(), src.Elem())
			dst.Set(p)
		}
	case reflect.Slice:
		if !src.IsNil() {
			s := reflect.MakeSlice(dt, src.Len(), src.Len())
			for i := range src.Len() {
				convert(s.Index(i), src.Index(i))
			}
			dst.Set(s)
		}
	case reflect.Map:
		if !src.IsNil() {
			m := reflect.MakeMapWithSize(dt, src.Len())
			for it := src.MapRange(); it.Next(); {
				e := reflect.New(dt.Elem()).Elem()
				convert(e, it.Value())
				m.SetMapIndex(it.Key(), e)
			}
			dst.Set(m)
		}
	default:
		panic(fmt.Sprintf("wire: cannot convert %v to %v", st, dt))
	}
}
