// Package capture keeps what a command writes to one stream, up to a
// limit, and passes it on as it comes (command.output events).
//
// # What it guarantees, and what not
//
// Text holds at most Limit bytes, the first ones written, never ending in
// a character cut in two by the limit; a stream that went past it is
// marked Truncated and nothing more is emitted. Emit sees the same bytes
// in order, each piece ending on a whole UTF-8 character (a character
// split between two reads is held until its end arrives, or emitted as
// it is at the end of the stream). Bytes that are not UTF-8 at all are
// passed on as they are: nothing is replaced or checked here. A Stream is
// read by one goroutine; Text is for after ReadFrom returns.
package capture

import (
	"bytes"
	"os"
	"unicode/utf8"
)

// Stream keeps up to Limit bytes of one stream and streams them to Emit
// (with Name), in pieces that end on whole UTF-8 characters.
type Stream struct {
	Name      string
	Limit     int
	Emit      func(string, []byte)
	buf       []byte
	pending   []byte // the start of a UTF-8 sequence not yet streamed
	truncated bool
}

// ReadFrom reads f to its end.
func (c *Stream) ReadFrom(f *os.File) {
	b := make([]byte, 32*1024)
	for {
		n, err := f.Read(b)
		if n > 0 {
			c.write(b[:n])
		}
		if err != nil {
			break
		}
	}
	if c.Emit != nil && len(c.pending) > 0 && !c.truncated {
		c.Emit(c.Name, c.pending)
	}
	c.pending = nil
}

func (c *Stream) write(p []byte) {
	room := c.Limit - len(c.buf)
	if len(p) > room {
		p = p[:max(room, 0)]
		c.truncated = true
	}
	if len(p) == 0 {
		return
	}
	c.buf = append(c.buf, p...)
	if c.Emit == nil {
		return
	}
	chunk := append(c.pending, p...)
	cut := completeUTF8(chunk)
	if cut > 0 {
		c.Emit(c.Name, bytes.Clone(chunk[:cut]))
	}
	c.pending = bytes.Clone(chunk[cut:])
}

// Truncated reports whether the stream went past Limit.
func (c *Stream) Truncated() bool { return c.truncated }

// Text is what was kept, without a character cut in two at the limit.
func (c *Stream) Text() string {
	b := c.buf
	if c.truncated {
		b = b[:completeUTF8(b)]
	}
	return string(b)
}

// completeUTF8 returns the length of b without a trailing incomplete (but
// so far valid) UTF-8 sequence.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
