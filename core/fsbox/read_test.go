//go:build unix

package fsbox

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReadTruncation(t *testing.T) {
	long := strings.Repeat("a", MaxReadBytes+100)
	block := strings.Repeat("b", 4095) + "\n" // 64 of these fill MaxReadBytes exactly
	utf := strings.Repeat("é", MaxReadBytes/2+10)
	cases := []struct {
		name          string
		content       string
		offset, limit int
		want          string // content
		total, out    int
		by            string // "" when not truncated
		err           errs.Kind
	}{
		{name: "empty file", content: "", total: 0, out: 0},
		{name: "one newline", content: "\n", want: "\n", total: 1, out: 1},
		{name: "no final newline", content: "a\nb\nc", want: "a\nb\nc", total: 3, out: 3},
		{name: "final newline", content: "a\nb\nc\n", want: "a\nb\nc\n", total: 3, out: 3},
		{name: "blank last line", content: "a\n\n", want: "a\n\n", total: 2, out: 2},
		{name: "crlf", content: "a\r\nb\r\n", want: "a\r\nb\r\n", total: 2, out: 2},
		{name: "exactly 2000 lines", content: lines(2000), want: lines(2000), total: 2000, out: 2000},
		{name: "2001 lines", content: lines(2001), want: lines(2000), total: 2001, out: 2000, by: ByLines},
		{name: "2001 lines no final newline", content: strings.TrimSuffix(lines(2001), "\n"), want: lines(2000), total: 2001, out: 2000, by: ByLines},
		{name: "limit", content: lines(10), limit: 3, want: lines(3), total: 10, out: 3, by: ByLines},
		{name: "limit to the end", content: lines(10), limit: 10, want: lines(10), total: 10, out: 10},
		{name: "limit past the end", content: lines(10), limit: 50, want: lines(10), total: 10, out: 10},
		{name: "limit over the cap", content: lines(2500), limit: 2400, want: lines(2000), total: 2500, out: 2000, by: ByLines},
		{name: "offset", content: "a\nb\nc\nd\n", offset: 3, want: "c\nd\n", total: 4, out: 2},
		{name: "offset and limit", content: "a\nb\nc\nd\n", offset: 2, limit: 2, want: "b\nc\n", total: 4, out: 2, by: ByLines},
		{name: "offset and limit reaching the end", content: "a\nb\nc\nd\n", offset: 3, limit: 2, want: "c\nd\n", total: 4, out: 2},
		{name: "offset last line", content: "a\nb", offset: 2, want: "b", total: 2, out: 1},
		{name: "offset zero is one", content: "a\nb\n", offset: 0, want: "a\nb\n", total: 2, out: 2},
		{name: "offset beyond end", content: "a\nb\n", offset: 3, err: errs.InvalidParams},
		{name: "offset far beyond end", content: "a\n", offset: 1000, err: errs.InvalidParams},
		{name: "offset into empty file", content: "", offset: 2, err: errs.InvalidParams},
		{name: "negative offset", content: "a\n", offset: -1, err: errs.InvalidParams},
		{name: "negative limit", content: "a\n", limit: -1, err: errs.InvalidParams},
		{name: "bytes cap exactly", content: strings.Repeat(block, 64), want: strings.Repeat(block, 64), total: 64, out: 64},
		{name: "bytes cap", content: strings.Repeat(block, 100), want: strings.Repeat(block, 64), total: 100, out: 64, by: ByBytes},
		{name: "bytes cap after offset", content: "x\n" + strings.Repeat(block, 100), offset: 2, want: strings.Repeat(block, 64), total: 101, out: 64, by: ByBytes},
		{name: "line longer than the cap", content: long + "\nb\n", want: long[:MaxReadBytes], total: 2, out: 1, by: ByBytes},
		{name: "only line longer than the cap", content: long, want: long[:MaxReadBytes], total: 1, out: 1, by: ByBytes},
		{name: "long line after short ones", content: "a\n" + long + "\n", want: "a\n", total: 2, out: 1, by: ByBytes},
		{name: "long line at offset", content: "a\n" + long + "\nc\n", offset: 2, want: long[:MaxReadBytes], total: 3, out: 1, by: ByBytes},
		{name: "long utf-8 line cut on a boundary", content: utf, want: utf[:MaxReadBytes], total: 1, out: 1, by: ByBytes},
		{name: "long utf-8 line odd offset", content: "a" + utf, want: ("a" + utf)[:MaxReadBytes-1], total: 1, out: 1, by: ByBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _ := makefs(t, "f = "+c.content)
			d := openDir(t, root, "share")
			r, err := d.Read("f", c.offset, c.limit)
			if c.err != "" {
				errkind.Want(t, err, c.err, "Read")
				checkErr(t, "Read", err, root)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != "text" || r.Path != "share/f" || r.Bytes != int64(len(c.content)) {
				t.Errorf("type %q path %q bytes %d", r.Type, r.Path, r.Bytes)
			}
			if r.Content != c.want {
				t.Errorf("content %d bytes %.40q…, want %d bytes %.40q…", len(r.Content), r.Content, len(c.want), c.want)
			}
			if !utf8.ValidString(r.Content) {
				t.Errorf("content is not valid UTF-8")
			}
			if len(r.Content) > MaxReadBytes {
				t.Errorf("content is %d bytes, over the cap", len(r.Content))
			}
			if r.TotalLines != c.total || r.OutputLines != c.out {
				t.Errorf("totalLines %d outputLines %d, want %d %d", r.TotalLines, r.OutputLines, c.total, c.out)
			}
			if r.Truncated != (c.by != "") || r.TruncatedBy != c.by {
				t.Errorf("truncated %v by %q, want by %q", r.Truncated, r.TruncatedBy, c.by)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	root, _ := makefs(t, "d/", "f = text", "rel => f", "dlink => d")
	d := openDir(t, root, "")
	for _, c := range []struct {
		rel  string
		kind errs.Kind
	}{
		{"d", errs.IsDirectory},
		{".", errs.IsDirectory},
		{"dlink", errs.IsDirectory},
		{"f/", errs.NotDirectory},
		{"rel/", errs.NotDirectory},
		{"f/x", errs.NotDirectory},
		{"missing", errs.NotFound},
		{"d/missing", errs.NotFound},
	} {
		_, err := d.Read(c.rel, 0, 0)
		errkind.Want(t, err, c.kind, "Read "+c.rel)
		checkErr(t, "Read "+c.rel, err, root)
	}
	r, err := d.Read("rel", 0, 0)
	if err != nil || r.Content != "text" || r.Path != "rel" {
		t.Errorf("Read through relative link: %+v, %v", r, err)
	}
}

func TestReadImagesAndBinary(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{200, 10, 10, 255})
	var pngData, jpegData, gifData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpegData, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifData, img, nil); err != nil {
		t.Fatal(err)
	}
	// A minimal WebP header: RIFF, size, WEBP, VP8L chunk.
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

	root, _ := makefs(t)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.png", pngData.Bytes())
	write("png.txt", pngData.Bytes()) // sniffed, not trusted by name
	write("a.jpg", jpegData.Bytes())
	write("a.gif", gifData.Bytes())
	write("a.webp", webp)
	write("text.png", []byte("not an image\n"))
	write("nul.txt", []byte("abc\x00def"))
	write("ctrl.bin", []byte("caf\xe9\x01\x02\n")) // not UTF-8, and control bytes
	write("elf", []byte("\x7fELF\x02\x01\x01\x00"))
	// A multi-byte character straddling the 8 KiB sniffing window is text.
	write("straddle.txt", []byte(strings.Repeat("a", sniffLen-1)+"é"+"tail\n"))
	// Invalid UTF-8 past the window is not looked at.
	write("late.txt", []byte(strings.Repeat("a", sniffLen+10)+"\xff\n"))
	big, err := os.Create(filepath.Join(root, "big.png"))
	if err != nil {
		t.Fatal(err)
	}
	big.Write(pngData.Bytes())
	big.Truncate(MaxImageBytes + 1)
	big.Close()

	d := openDir(t, root, "share")
	for _, c := range []struct {
		name, mime string
		data       []byte
	}{
		{"a.png", "image/png", pngData.Bytes()},
		{"png.txt", "image/png", pngData.Bytes()},
		{"a.jpg", "image/jpeg", jpegData.Bytes()},
		{"a.gif", "image/gif", gifData.Bytes()},
		{"a.webp", "image/webp", webp},
	} {
		r, err := d.Read(c.name, 0, 0)
		if err != nil {
			t.Errorf("Read %s: %v", c.name, err)
			continue
		}
		if r.Type != "image" || r.MimeType != c.mime || !bytes.Equal(r.Data, c.data) || r.Bytes != int64(len(c.data)) || r.Path != "share/"+c.name {
			t.Errorf("Read %s: type %q mime %q %d bytes path %q", c.name, r.Type, r.MimeType, len(r.Data), r.Path)
		}
		if c.name == "a.png" {
			if _, err := png.Decode(bytes.NewReader(r.Data)); err != nil {
				t.Errorf("returned PNG does not decode: %v", err)
			}
		}
	}
	for _, name := range []string{"text.png", "straddle.txt", "late.txt"} {
		if r, err := d.Read(name, 0, 0); err != nil || r.Type != "text" {
			t.Errorf("Read %s: %+v, %v; want text", name, r.Type, err)
		}
	}
	for _, name := range []string{"nul.txt", "elf", "ctrl.bin"} {
		_, err := d.Read(name, 0, 0)
		errkind.Want(t, err, errs.Binary, "Read "+name)
	}
	_, err = d.Read("big.png", 0, 0)
	errkind.Want(t, err, errs.TooLarge, "Read big.png")
}

// Text in an 8-bit encoding is read, converted to UTF-8, and says which
// encoding was assumed; the bytes come back as they are with ReadBase64.
func TestReadEightBit(t *testing.T) {
	root, _ := makefs(t)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("latin1.txt", []byte("caf\xe9\nna\xefve\n"))
	write("cp1252.txt", []byte("\x93quoted\x94 costs \x8020\r\n"))
	write("c1.txt", []byte("a\x81b \xe9\n")) // 0x81 is not windows-1252
	write("long.txt", []byte(strings.Repeat("\xe9", MaxReadBytes+10)))
	d := openDir(t, root, "")
	for _, c := range []struct{ name, content, enc string }{
		{"latin1.txt", "café\nnaïve\n", Windows1252},
		{"cp1252.txt", "“quoted” costs €20\r\n", Windows1252},
		{"c1.txt", "a\u0081b é\n", Latin1},
	} {
		r, err := d.Read(c.name, 0, 0)
		if err != nil || r.Type != "text" || r.Content != c.content || r.Encoding != c.enc {
			t.Errorf("Read %s: %q (%s), %v; want %q (%s)", c.name, r.Content, r.Encoding, err, c.content, c.enc)
		}
	}
	if r, err := d.Read("latin1.txt", 2, 0); err != nil || r.Content != "naïve\n" || r.TotalLines != 2 {
		t.Errorf("Read latin1.txt from line 2: %+v, %v", r, err)
	}
	// A cut by bytes keeps every byte (none is half a character).
	if r, err := d.Read("long.txt", 0, 0); err != nil || r.Content != strings.Repeat("é", MaxReadBytes) || r.TruncatedBy != ByBytes {
		t.Errorf("Read long.txt: %d bytes, %v", len(r.Content), err)
	}
	bin := []byte("\x7fELF\x00\x01\x02\xff")
	write("elf", bin)
	r, err := d.ReadBase64("elf", 0, 0)
	if err != nil || r.Type != "binary" || !bytes.Equal(r.Data, bin) || r.Truncated || r.Bytes != int64(len(bin)) {
		t.Fatalf("ReadBase64: %+v, %v", r, err)
	}
	if r, err := d.ReadBase64("elf", 4, 2); err != nil || !bytes.Equal(r.Data, bin[4:6]) || !r.Truncated || r.Offset != 4 {
		t.Errorf("ReadBase64 from 4, 2 bytes: %+v, %v", r, err)
	}
	_, err = d.ReadBase64("elf", 8, 0)
	errkind.Want(t, err, errs.InvalidParams, "ReadBase64 past the end")
	_, err = d.ReadBase64(".", 0, 0)
	errkind.Want(t, err, errs.IsDirectory, "ReadBase64 of a folder")
}

// TestReadStreams checks that a big file is not slurped to return a few
// lines.
func TestReadStreams(t *testing.T) {
	root, _ := makefs(t)
	f, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("z", 99) + "\n"
	chunk := strings.Repeat(line, 10000) // 1 MB
	for range 32 {
		f.WriteString(chunk)
	}
	f.Close()
	d := openDir(t, root, "")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := d.Read("big.txt", 5, 10)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalLines != 320000 || r.OutputLines != 10 || r.TruncatedBy != ByLines || r.Bytes != 32*int64(len(chunk)) {
		t.Errorf("got %d/%d lines, by %q, %d bytes", r.OutputLines, r.TotalLines, r.TruncatedBy, r.Bytes)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading 10 lines of a 32 MB file allocated %d bytes", alloc)
	}
}
