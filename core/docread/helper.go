package docread

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
)

// The helper protocol: the document arrives on standard input, its file
// name (for the extension only) as the one argument; standard output
// carries one JSON header line and then the text.
//
//	{"format":"pdf","parts":12,"cut":false}\n<text>
//	{"reason":"damaged","message":"The document could not be read: …"}\n

// MaxInput is the largest document Serve reads.
const MaxInput = 64 << 20

type header struct {
	Format  Format `json:"format,omitempty"`
	Parts   int    `json:"parts,omitempty"`
	Cut     bool   `json:"cut,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Serve is the helper process's whole work: it reads a document from in,
// extracts its text and writes the reply to out. It returns the process's
// exit code: 0 whenever a reply was written, errors included.
func Serve(name string, in io.Reader, out io.Writer, lim Limits) int {
	debug.SetMaxStack(64 << 20) // a runaway recursion dies early, not at 1 GiB
	data, err := io.ReadAll(io.LimitReader(in, MaxInput+1))
	bw := bufio.NewWriterSize(out, 256<<10)
	reply := func(h header, text string) int {
		b, _ := json.Marshal(h)
		bw.Write(b)
		bw.WriteByte('\n')
		bw.WriteString(text)
		if bw.Flush() != nil {
			return 1
		}
		return 0
	}
	switch {
	case err != nil:
		return reply(header{Reason: Damaged, Message: "The document could not be read."}, "")
	case len(data) > MaxInput:
		return reply(header{Reason: Bomb, Message: fmt.Sprintf("The document is larger than %d MiB.", MaxInput>>20)}, "")
	}
	res, err := Extract(data, Detect(name, data), lim)
	if err != nil {
		e := err.(*Error)
		return reply(header{Reason: e.Reason, Message: e.Msg}, "")
	}
	return reply(header{Format: res.Format, Parts: res.Parts, Cut: res.Cut}, res.Text)
}

// ParseReply reads what Serve wrote. A reply that does not parse is a
// damaged document (the helper died half-way).
func ParseReply(b []byte) (Result, error) {
	line, text, ok := bytes.Cut(b, []byte("\n"))
	var h header
	if !ok || json.Unmarshal(line, &h) != nil {
		return Result{}, errLooksDamaged
	}
	if h.Reason != "" {
		if h.Message == "" {
			return Result{}, errLooksDamaged
		}
		return Result{}, &Error{h.Reason, h.Message}
	}
	if h.Format == "" {
		return Result{}, errLooksDamaged
	}
	return Result{Format: h.Format, Text: string(text), Parts: h.Parts, Cut: h.Cut}, nil
}
