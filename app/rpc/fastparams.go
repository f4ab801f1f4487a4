package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// decodeFast is DecodeParams in one pass for the usual call: params an
// object whose names are all parameters of *v that hold no struct (so
// no unknown name can hide inside), each required one given once and
// not null. It reads the names with a small scanner and then decodes
// with json.Unmarshal, without the second pass that looking for
// missing parameters otherwise takes. It reports false, leaving *v as
// it was, for anything else, and for anything json.Unmarshal refuses:
// DecodeParams then takes the careful path, which finds the error and
// says it. Whatever decodeFast accepts, the careful path accepts too,
// with the same value (FuzzDecodeFastAgrees).
func decodeFast(params []byte, v any) bool {
	p := planFor(reflect.TypeOf(v))
	if p == nil {
		return false
	}
	var seen [8]int // times each required parameter was named, by p.required index
	if len(p.required) > len(seen) {
		return false
	}
	if !eachName(params, func(name, value []byte) bool {
		f := p.field(name)
		if f == nil || !f.known(value) {
			return false
		}
		if f.required >= 0 {
			seen[f.required]++
			if string(value) == "null" {
				return false
			}
		}
		return true
	}) {
		return false
	}
	for i := range p.required {
		if seen[i] != 1 {
			return false // missing, or named twice (the last one counts): the careful path decides
		}
	}
	// Into a copy: json.Unmarshal fills what it can before it fails, and
	// a failure must leave *v as the caller gave it (defaults included).
	rv := reflect.ValueOf(v).Elem()
	tmp := reflect.New(rv.Type())
	tmp.Elem().Set(rv)
	if json.Unmarshal(params, tmp.Interface()) != nil {
		return false
	}
	rv.Set(tmp.Elem())
	return true
}

// plan is what decodeFast knows of a struct type's parameters.
type plan struct {
	fields   []planField
	required []string
}

type planField struct {
	name     []byte // as encoding/json names it
	flat     bool   // holds no struct, at any depth: nothing inside it can be unknown
	sub      *plan  // for a struct or pointer to one: its own fields
	required int    // index in plan.required, or -1
}

// known reports whether value, given for f, names only known fields at
// every depth: f holds no struct, or value is null or an object of f's
// struct's fields, each known in turn. encoding/json refuses the rest
// (DisallowUnknownFields), and so may it, but in its own words.
func (f *planField) known(value []byte) bool {
	if f.flat || string(value) == "null" {
		return true
	}
	if f.sub == nil {
		return false
	}
	return eachName(value, func(name, value []byte) bool {
		g := f.sub.field(name)
		return g != nil && g.known(value)
	})
}

// field is the parameter name stands for, matched as encoding/json
// matches names (ignoring case), or nil; a name whose case folds to
// another length (the Kelvin sign) is left to the careful path.
func (p *plan) field(name []byte) *planField {
	for i := range p.fields {
		if f := &p.fields[i]; len(f.name) == len(name) && bytes.EqualFold(f.name, name) {
			return f
		}
	}
	return nil
}

// plans caches planFor by type; a nil *plan means no fast path.
var plans sync.Map // reflect.Type → *plan

// planFor returns the plan of t, a pointer to a struct, or nil when the
// struct has what the fast path leaves to encoding/json's full rules:
// embedded fields, the ",string" option, two names alike but for case,
// or a struct field whose own struct has one of those.
func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building := map[reflect.Type]*plan{}
	p := makePlan(t, building)
	if p == nil {
		plans.Store(t, p)
		return nil
	}
	for bt, bp := range building { // whole now: t and the structs it holds
		plans.Store(bt, bp)
	}
	return p
}

// makePlan makes the plan of t, and of the structs it holds, in building;
// a struct that holds itself finds its plan there, still being made.
func makePlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	p := &plan{}
	building[t] = p
	for f := range t.Elem().Fields() {
		if f.Anonymous {
			return nil
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue // encoding/json ignores it: its name is unknown
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "string") {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		for _, g := range p.fields {
			if strings.EqualFold(string(g.name), name) {
				return nil
			}
		}
		pf := planField{name: []byte(name), flat: flat(f.Type), required: -1}
		if st := f.Type; st.Kind() == reflect.Struct || st.Kind() == reflect.Pointer && st.Elem().Kind() == reflect.Struct {
			if st.Kind() == reflect.Struct {
				st = reflect.PointerTo(st)
			}
			if pf.sub = makePlan(st, building); pf.sub == nil {
				return nil
			}
		}
		if f.Tag.Get("rpc") == "required" {
			pf.required = len(p.required)
			p.required = append(p.required, name)
		}
		p.fields = append(p.fields, pf)
	}
	return p
}

// flat reports whether a value of t holds no struct at any depth.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return flat(t.Elem())
	case reflect.Map:
		return flat(t.Key()) && flat(t.Elem())
	}
	return true
}

// eachName calls yield with each member name of the JSON object in
// params, in order, and its value; it stops and reports
// false when yield does, or when params is not an object it can read
// simply (a name with an escape in it, or not JSON: json.Unmarshal has
// the last word on validity). On valid JSON the names it yields are the
// object's names.
func eachName(params []byte, yield func(name, value []byte) bool) bool {
	i := skipSpace(params, 0)
	if i >= len(params) || params[i] != '{' {
		return false
	}
	i = skipSpace(params, i+1)
	if i < len(params) && params[i] == '}' {
		return true
	}
	for {
		if i >= len(params) || params[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(params) && params[end] != '"' && params[end] != '\\' {
			end++
		}
		if end >= len(params) || params[end] != '"' {
			return false
		}
		name := params[i+1 : end]
		i = skipSpace(params, end+1)
		if i >= len(params) || params[i] != ':' {
			return false
		}
		i = skipSpace(params, i+1)
		start := i
		if i = skipValue(params, i); i < 0 {
			return false
		}
		if !yield(name, params[start:i]) {
			return false
		}
		i = skipSpace(params, i)
		if i >= len(params) {
			return false
		}
		switch params[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(params, i+1)
		default:
			return false
		}
	}
}

// skipValue returns the index just past the JSON value at params[i], or
// -1 when it runs off the end.
func skipValue(params []byte, i int) int {
	depth := 0
	for i < len(params) {
		switch params[i] {
		case '"':
			for i++; i < len(params) && params[i] != '"'; i++ {
				if params[i] == '\\' {
					i++
				}
			}
			if i >= len(params) {
				return -1
			}
			if i++; depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the object around a number or literal
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth > 0 {
		return -1
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
