package execbox

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue runs `true` through Runner.Run: validation, scope
// preparation, pipes, limits and cgroup while bwrap waits, output capture.
func BenchmarkRunTrue(b *testing.B) {
	bx := newBox(b)
	r := newRunner(b, bx.opts())
	s := bx.spec("true")
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(b.Context(), s)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkBwrapPlain runs the same bwrap argv directly through os/exec,
// with the descriptors it expects filled in beforehand and no limits: the
// floor Runner.Run's overhead is measured against.
func BenchmarkBwrapPlain(b *testing.B) {
	bx := newBox(b)
	r := newRunner(b, bx.opts())
	s := bx.spec("true")
	if _, err := r.Run(b.Context(), s); err != nil { // create playground and share link
		b.Fatal(err)
	}
	argv, err := r.Argv(s)
	if err != nil {
		b.Fatal(err)
	}
	files := r.identity("alice")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	filled := func(data []byte) *os.File {
		rd, wr, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wr.Write(data); err != nil {
			b.Fatal(err)
		}
		wr.Close()
		return rd
	}
	b.ReportAllocs()
	for b.Loop() {
		passwd, group, block := filled(files[0]), filled(files[1]), filled([]byte{1})
		var out, errOut bytes.Buffer
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{}
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.ExtraFiles = []*os.File{passwd, group, devnull, block}
		err := cmd.Run()
		passwd.Close()
		group.Close()
		block.Close()
		if err != nil {
			b.Fatalf("%v: %s", err, errOut.String())
		}
	}
}
