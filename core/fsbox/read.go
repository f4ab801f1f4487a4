package fsbox

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
	"unsafe"

	"corral/core/errs"
)

// Truncation causes, the values of ReadResult.TruncatedBy.
const (
	ByLines = "lines"
	ByBytes = "bytes"
)

// ReadResult is the answer of file.read: a text, image or binary result
// in one struct, whose fields say which (app/wire gives each type
// docs/protocol.md's JSON shape).
type ReadResult struct {
	Type string // "text" or "image"
	Path string // agent-visible
	// Bytes is the file's size.
	Bytes int64

	// Text results. Content holds the returned lines exactly as in the
	// file, line endings included.
	Content     string
	TotalLines  int    // lines in the file; a final newline does not start another
	OutputLines int    // lines in Content
	Truncated   bool   // lines after the returned ones remain
	TruncatedBy string // ByLines, ByBytes, or "" (JSON null) when not truncated
	// Encoding is the 8-bit encoding the text was taken to be in and
	// converted from (Windows1252, Latin1), "" for UTF-8; for a binary
	// result "base64".
	Encoding string

	// Image and binary results.
	MimeType string
	Data     []byte
	Offset   int64 // binary: the first byte in Data
}

// Read returns a regular file of d: text from line offset (1-based; 0 means
// 1) for at most limit lines (0: no limit but the caps), capped at
// MaxReadLines lines and MaxReadBytes bytes; or, for a PNG, JPEG, GIF or
// WebP image recognised by its content, the whole image. Text whose first
// 8 KiB are not UTF-8 is taken to be windows-1252 or iso-8859-1 (see
// eightBit), converted to UTF-8 and says so in Encoding; binary files (a
// NUL byte or a control character text does not have in the first 8 KiB)
// answer binary (ReadBase64 returns their bytes).
//
// The file is streamed: only the returned lines are kept in memory, while
// the rest is read to count totalLines. A single line longer than
// MaxReadBytes is returned cut at MaxReadBytes (on a UTF-8 boundary) with
// truncatedBy "bytes". An offset past the last line answers invalid_params.
func (d Dir) Read(rel string, offset, limit int) (ReadResult, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return ReadResult{}, err
	}
	v := d.Visible(name)
	if offset < 0 || limit < 0 {
		return ReadResult{}, errs.New(errs.InvalidParams, v, "The offset and limit must not be negative.")
	}
	if offset == 0 {
		offset = 1
	}
	f, fi, err := d.openRegular(name, slash)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()

	// A buffer the size of a small file (at least what sniffing needs),
	// 64 KiB at most: most files read are small. Buffers are reused; none
	// of their bytes outlive this call (chunks are copied to out).
	br := getReader(f, fi.Size())
	defer putReader(br)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return ReadResult{}, d.fail(err, name)
	}
	if mime := sniffImage(head); mime != "" {
		if fi.Size() > MaxImageBytes {
			return ReadResult{}, errs.New(errs.TooLarge, v, "%s is an image of %d bytes; Corral returns images up to %d bytes.", v, fi.Size(), MaxImageBytes)
		}
		data, err := io.ReadAll(io.LimitReader(br, MaxImageBytes+1))
		if err != nil {
			return ReadResult{}, d.fail(err, name)
		}
		if len(data) > MaxImageBytes {
			return ReadResult{}, errs.New(errs.TooLarge, v, "%s is an image larger than %d bytes.", v, MaxImageBytes)
		}
		return ReadResult{Type: "image", Path: v, MimeType: mime, Bytes: int64(len(data)), Data: data}, nil
	}
	enc := "" // UTF-8
	if isBinary(head, len(head) < sniffLen) {
		if enc = eightBit(head); enc == "" {
			return ReadResult{}, errs.New(errs.Binary, v, "%s is a binary file (not text, and not a PNG, JPEG, GIF or WebP image), so it can't be shown as text; read it with encoding base64 for its bytes.", v)
		}
	}

	maxLines := MaxReadLines
	if limit > 0 && limit < maxLines {
		maxLines = limit
	}
	var (
		out       = make([]byte, 0, min(fi.Size(), MaxReadBytes))
		total     int // lines started so far
		outLines  int // lines in out
		atStart   = true
		emitting  bool // the current line goes to out
		lineStart int  // offset in out where the current line starts
		stopped   string
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if atStart {
				atStart = false
				total++
				emitting = false
				if total >= offset && stopped == "" {
					if outLines >= maxLines {
						stopped = ByLines
					} else {
						emitting = true
						outLines++
						lineStart = len(out)
					}
				}
			}
			if emitting {
				if room := MaxReadBytes - len(out); len(chunk) <= room {
					out = append(out, chunk...)
				} else if lineStart == 0 {
					// The first line alone is over the cap: return its start,
					// without a UTF-8 sequence cut in two (the cut may fall
					// on the end of an earlier chunk).
					out = append(out, chunk[:room]...)
					if enc == "" {
						out = completeRunes(out)
					}
					emitting = false
					stopped = ByBytes
				} else {
					// This line does not fit: leave it for the next call.
					out = out[:lineStart]
					outLines--
					emitting = false
					stopped = ByBytes
				}
			}
			if chunk[len(chunk)-1] == '\n' {
				atStart = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return ReadResult{}, d.fail(err, name)
		}
	}
	if offset > 1 && offset > total {
		lines := "lines"
		if total == 1 {
			lines = "line"
		}
		return ReadResult{}, errs.New(errs.InvalidParams, v, "%s has %d %s, so there is no line %d to start from.", v, total, lines, offset)
	}
	content := contentString(out)
	if enc != "" {
		content = decode8(out, enc)
	}
	return ReadResult{
		Type:        "text",
		Path:        v,
		Content:     content,
		Encoding:    enc,
		Bytes:       fi.Size(),
		TotalLines:  total,
		OutputLines: outLines,
		Truncated:   stopped != "",
		TruncatedBy: stopped,
	}, nil
}

// contentString returns b as a string without copying it; b is not
// touched again.
func contentString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Readers for Read, by buffer size: sniffLen for small files, 64 KiB for
// the others.
var smallReaders, bigReaders sync.Pool

func getReader(f io.Reader, size int64) *bufio.Reader {
	pool, n := &smallReaders, sniffLen
	if size+1 > sniffLen {
		pool, n = &bigReaders, 64<<10
	}
	if br, ok := pool.Get().(*bufio.Reader); ok {
		br.Reset(f)
		return br
	}
	return bufio.NewReaderSize(f, n)
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	if br.Size() == sniffLen {
		smallReaders.Put(br)
	} else {
		bigReaders.Put(br)
	}
}

// cutUTF8 returns at most n bytes of b, not splitting a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if n >= len(b) {
		return b
	}
	return completeRunes(b[:n])
}

// completeRunes drops a UTF-8 sequence cut short at the end of b.
func completeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// sniffImage returns the MIME type of the image formats Read returns, from
// their signatures, or "".
func sniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && bytes.HasPrefix(b, []byte("RIFF")) && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// isBinary reports whether head, the start of a file, holds a NUL byte or
// invalid UTF-8. Unless atEOF, a UTF-8 sequence cut by the end of head is
// not held against it.
func isBinary(head []byte, atEOF bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !atEOF {
		head = completeRunes(head)
	}
	return !utf8.Valid(head)
}
