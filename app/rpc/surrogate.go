package rpc

// LoneSurrogate reports whether raw JSON holds a string escape \uD800–
// \uDFFF that is not half of a high-low pair. encoding/json decodes such
// an escape to U+FFFD, so "caf\udcff.txt" would name "caf\ufffd.txt", a
// different file than the one sent; Corral refuses the request instead.
// raw need not be valid JSON: a backslash always starts an escape in a
// JSON string and never appears outside one.
func LoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) {
			return false
		}
		if raw[i+1] != 'u' {
			i++ // \" \\ \n …: skip the escaped byte
			continue
		}
		r, ok := hex4(raw, i+2)
		i += 5
		if !ok {
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // a low half with no high half before it
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo, ok := hex4(raw, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

// hex4 reads four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
