// Package rpc parses and builds JSON-RPC 2.0 messages as Corral speaks
// them (docs/protocol.md sections 5, 7 and 10): one request or notification per
// frame, batches refused, named parameters only, and errors carrying a kind
// and a polite sentence.
//
// Guarantees: Parse never panics and never allocates more than a small
// multiple of the frame it is given; every frame it refuses comes back
// with the error to answer and the id to answer it with (null when the id
// could not be read, and an id over 256 bytes is never echoed).
// DecodeParams refuses unknown parameter names, wrong types, a missing
// `rpc:"required"` parameter (null counts as missing, "" does not) and
// strings holding a lone UTF-16 surrogate, each with an invalid_params
// error whose sentence names the parameter. FromError never passes a
// foreign error's text to the client: anything that is not a core/errs
// error answers "Something went wrong on the computer running Corral"
// (kind io). Marshal, AppendResult and Notify write "<", ">" and "&" as
// themselves, so a frame is no larger than its content needs.
//
// Not guaranteed: the frame size is bounded by the transport, not here;
// method names are not checked against any table (the caller's dispatcher
// answers MethodNotFound); parameter names match as encoding/json matches
// them, ignoring case.
package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"corral/core/errs"
)

// JSON-RPC error codes.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeServer         = -32000
)

// CancelRequest is the notification {id} that cancels the sender's own
// call with that id on the same connection (as LSP's $/cancelRequest).
// The call still answers; the answer may be an error or a partial result.
const CancelRequest = "$/cancelRequest"

// Request is a parsed request or notification.
type Request struct {
	ID     json.RawMessage // nil for a notification; otherwise a string, number or null
	Method string
	Params json.RawMessage // nil when absent or null; otherwise an object
}

// IsNotification reports whether no answer is expected.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
}

// ErrorData carries Corral's error kind and the path concerned.
type ErrorData struct {
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
}

func (e *Error) Error() string { return e.Message }

var nullID = json.RawMessage("null")

// Parse reads one frame. On failure it returns the error to answer and the
// id to answer it with (null when the id could not be read).
func Parse(frame []byte) (*Request, json.RawMessage, *Error) {
	if !utf8.Valid(frame) {
		// Answered with its id when it has one: a client waits for
		// that id, and would wait for ever on an answer to null.
		return nil, IDOf(frame), notJSON()
	}
	if trimmed := bytes.TrimLeft(frame, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		switch {
		case !json.Valid(frame):
			return nil, nullID, notJSON()
		case trimmed[0] == '[':
			return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Batches are not supported: send one request per message."}
		}
		return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "A request must be a JSON object."}
	}
	// One pass into a struct: absent members stay nil, a JSON null
	// becomes the raw "null". Every member is raw, so the only way this
	// fails is invalid JSON (Unmarshal checks the whole frame first).
	var env struct {
		JSONRPC *json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Method  *json.RawMessage `json:"method"`
		Params  json.RawMessage  `json:"params"`
	}
	if json.Unmarshal(frame, &env) != nil {
		return nil, nullID, notJSON()
	}
	req := &Request{}
	if id := env.ID; id != nil {
		switch {
		case bytes.Equal(id, nullID):
		case id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'):
			if len(id) > 256 {
				return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "The request id is too long."}
			}
		default:
			return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "The request id must be a string, a number or null."}
		}
		req.ID = id
	}
	answerID := req.ID
	if answerID == nil {
		answerID = nullID
	}
	var version string
	if env.JSONRPC == nil || json.Unmarshal(*env.JSONRPC, &version) != nil || version != "2.0" {
		return nil, answerID, &Error{Code: CodeInvalidRequest, Message: `The request must have "jsonrpc": "2.0".`}
	}
	if env.Method == nil || json.Unmarshal(*env.Method, &req.Method) != nil || req.Method == "" {
		return nil, answerID, &Error{Code: CodeInvalidRequest, Message: "The request must name a method as a string."}
	}
	if p := env.Params; p != nil && !bytes.Equal(p, nullID) {
		if p[0] != '{' {
			return nil, answerID, &Error{Code: CodeInvalidParams, Message: "params must be an object of named parameters.", Data: &ErrorData{Kind: string(errs.InvalidParams)}}
		}
		req.Params = p
	}
	return req, answerID, nil
}

// IDOf is the id of frame, a request refused before it is read (its
// text is not UTF-8), to answer it with: a string of at most 256 bytes
// of UTF-8, or a number, as Parse takes them; otherwise (no id, not JSON)
// null.
func IDOf(frame []byte) json.RawMessage {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(frame, &env) != nil {
		return nullID
	}
	id := env.ID
	if len(id) == 0 || len(id) > 256 || !utf8.Valid(id) || !(id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
		return nullID
	}
	return id
}

func notJSON() *Error {
	return &Error{Code: CodeParse, Message: "The message is not valid UTF-8 JSON."}
}

// LoneSurrogateMessage is the sentence that refuses parameters with a
// string holding half of a UTF-16 surrogate pair (see LoneSurrogate).
const LoneSurrogateMessage = `A string in the parameters holds a lone UTF-16 surrogate (\uD800 to \uDFFF without its pair): it names no character, so Corral cannot tell which file or text was meant. Send the text as UTF-8.`

// DecodeParams decodes named parameters into v, refusing unknown names,
// wrong types, missing required parameters and lone surrogates with an
// invalid_params error that says which. A struct field tagged
// `rpc:"required"` must be present and not null ("" is a value: an empty
// string can be meant).
func DecodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if LoneSurrogate(params) {
		return errs.New(errs.InvalidParams, "", "%s", LoneSurrogateMessage)
	}
	if decodeFast(params, v) {
		return nil
	}
	return decodeCareful(params, v)
}

// decodeCareful is DecodeParams the long way: a decoder that refuses
// unknown names at any depth, then a second look at params for the
// required ones. It finds and words every error.
func decodeCareful(params json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more follows the parameters object")
	}
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return missing(params, v)
	case errors.As(err, &te):
		return errs.New(errs.InvalidParams, "", "Parameter %q must be %s.", te.Field, describe(fieldType(v, te.Field, te.Type)))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errs.New(errs.InvalidParams, "", "Unknown parameter %s.", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		// A type's own decoder refused its value (time.Time's, say), or
		// the params are not one object: either way in Go's words, which
		// are not the caller's.
		if name, t, ok := refused(params, v); ok {
			return errs.New(errs.InvalidParams, "", "Parameter %q must be %s.", name, describe(t))
		}
		return errs.New(errs.InvalidParams, "", "The parameters could not be read: send them as one JSON object.")
	}
}

// refused names the top-level field of *v whose value in params does not
// decode on its own, with the field's type.
func refused(params json.RawMessage, v any) (name string, t reflect.Type, ok bool) {
	var given map[string]json.RawMessage
	if json.Unmarshal(params, &given) != nil {
		return "", nil, false
	}
	for name, f := range fieldsOf(reflect.TypeOf(v)) {
		for k, raw := range given {
			if strings.EqualFold(k, name) && json.Unmarshal(raw, reflect.New(f.Type).Interface()) != nil {
				return name, f.Type, true
			}
		}
	}
	return "", nil, false
}

// missing names the first required field of *v absent from params.
func missing(params json.RawMessage, v any) error {
	names := requiredNames(reflect.TypeOf(v))
	if len(names) == 0 {
		return nil // nothing to look for: no second pass over params
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(params, &given); err != nil {
		return errs.New(errs.InvalidParams, "", "params must be an object of named parameters.")
	}
	for _, name := range names {
		if !present(given, name) {
			return errs.New(errs.InvalidParams, "", "The parameter %q is missing.", name)
		}
	}
	return nil
}

// present reports whether given holds name with a value other than null;
// names match as encoding/json matches them (ignoring case).
func present(given map[string]json.RawMessage, name string) bool {
	for k, raw := range given {
		if strings.EqualFold(k, name) && !bytes.Equal(raw, nullID) {
			return true
		}
	}
	return false
}

// required caches requiredNames by type.
var required sync.Map // reflect.Type → []string

// requiredNames lists the JSON names of the fields of *T tagged
// `rpc:"required"`, in field order.
func requiredNames(t reflect.Type) []string {
	if names, ok := required.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for name, f := range fieldsOf(t) {
		if f.Tag.Get("rpc") == "required" {
			names = append(names, name)
		}
	}
	required.Store(t, names)
	return names
}

// fieldType is the type of the top-level field of *v named by a decoding
// error (its JSON name), which says more than the element that failed:
// "env" is an object of strings, not a string. Else fallback.
func fieldType(v any, field string, fallback reflect.Type) reflect.Type {
	for name, f := range fieldsOf(reflect.TypeOf(v)) {
		if name == field {
			return f.Type
		}
	}
	return fallback
}

// fieldsOf yields the fields of the struct t points to, each with the name
// its json tag gives it; nothing when t is not a pointer to a struct.
func fieldsOf(t reflect.Type) iter.Seq2[string, reflect.StructField] {
	return func(yield func(string, reflect.StructField) bool) {
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return
		}
		for f := range t.Elem().Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); !yield(name, f) {
				return
			}
		}
	}
}

func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() {
		return "a time such as 2026-01-02T15:04:05Z"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "an object"
		}
		return "an object whose values are " + strings.TrimPrefix(describe(t.Elem()), "a ") + "s"
	case reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Interface:
		return "a value of another type"
	}
	return "of another type"
}

// FromError turns any error into the JSON-RPC error answered for it.
func FromError(err error) *Error {
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	e := errs.As(err)
	code := CodeServer
	if e.Kind == errs.InvalidParams {
		code = CodeInvalidParams
	}
	return &Error{Code: code, Message: e.Msg, Data: &ErrorData{Kind: string(e.Kind), Path: e.Path}}
}

// MethodNotFound is the error for an unknown method.
func MethodNotFound(name string) *Error {
	if len(name) > 64 {
		name = name[:64]
	}
	return &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("There is no method named %q.", strings.ToValidUTF8(name, ""))}
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// AppendResult appends a successful response to dst (which may be a
// reused buffer) and returns the extended slice.
func AppendResult(dst []byte, id json.RawMessage, result any) ([]byte, error) {
	if result == nil {
		result = struct{}{}
	}
	if a, ok := result.(Appender); ok {
		if b, ok := appendResponse(dst, id, a); ok {
			return b, nil
		}
	}
	buf := bytes.NewBuffer(dst)
	if err := encode(buf, response{JSONRPC: "2.0", ID: id, Result: result}); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// encode writes v as JSON without HTML escaping: frames are not HTML, and
// a URL's "&" written as "\u0026" ends up verbatim in what agents and
// language models copy.
func encode(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode ends the value with a newline
	return nil
}

// Marshal is json.Marshal without HTML escaping, as frames are written
// (see encode): for results that leave Corral another way, such as MCP.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encode(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Fail encodes an error response.
func Fail(id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	var buf bytes.Buffer
	if err := encode(&buf, response{JSONRPC: "2.0", ID: id, Error: e}); err != nil { // cannot happen for these types; answer something valid
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error."}}`)
	}
	return buf.Bytes()
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// Notify encodes a notification.
func Notify(method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	err := encode(&buf, notification{JSONRPC: "2.0", Method: method, Params: params})
	return buf.Bytes(), err
}

// IDText is the canonical text of a request id, for matching one id
// against another (a $/cancelRequest's, a command.cancel's): compact JSON,
// a string unquoted. ok is false for an absent or invalid id.
func IDText(id json.RawMessage) (text string, ok bool) {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil {
		return "", false
	}
	s := b.String()
	if uq, err := strconv.Unquote(s); err == nil && s[0] == '"' {
		return uq, true
	}
	return s, true
}
