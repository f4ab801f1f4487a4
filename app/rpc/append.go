package rpc

import (
	"encoding/json"
	"unicode/utf8"
)

// Appender is a result that writes its own JSON: the very bytes Marshal
// writes for it, only sooner. AppendResult uses it for the results that
// are mostly one long string (file.read's text), where encoding/json's
// byte-at-a-time escaping is most of the cost of an answer.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// appendResponse appends {"jsonrpc":"2.0","id":id,"result":…} for a result
// that writes itself, as encode would write it; ok is false for an id it
// leaves to encode (anything but a short number or plain string).
func appendResponse(dst []byte, id json.RawMessage, a Appender) (_ []byte, ok bool) {
	if !plainID(id) {
		return dst, false
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = a.AppendJSON(dst)
	return append(dst, '}'), true
}

// plainID reports whether id is a JSON number or string that encoding/json
// writes back byte for byte: printable ASCII, no spaces or escapes.
func plainID(id json.RawMessage) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c > '~' || c == '\\' {
			return false
		}
	}
	return json.Valid(id) && id[0] != '{' && id[0] != '['
}

// AppendString appends s as a JSON string exactly as Marshal writes it:
// HTML characters as themselves, invalid UTF-8 as \ufffd, U+2028 and
// U+2029 escaped (FuzzAppendString holds it to that). Eight bytes at a
// time while none needs a look of its own.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if w := s[i : i+8]; plain8(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) {
				i += 8
				continue
			}
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the eight bytes in w needs escaping or
// decoding: all are ASCII, none is below ' ', a '"' or a '\\'. (A byte
// test after "Bit Twiddling Hacks": no false "plain", some false "not".)
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) bool { return (x-ones)&^x&highs != 0 }
	return w&highs == 0 && (w-ones*' ')&^w&highs == 0 && !zero(w^(ones*'"')) && !zero(w^(ones*'\\'))
}
