package applypatch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/patch"
	"corral/core/paths"
	"corral/core/sandbox"
	"corral/core/testkit/auditmem"
)

// patchBench is 10 files of 1,000 lines and a unified patch of 100 hunks
// (10 per file, each 3 lines of context around a changed line), about
// 1,000 lines long.
type patchBench struct {
	files map[string][]byte
	patch string
}

func newPatchBench() patchBench {
	pb := patchBench{files: map[string][]byte{}}
	var p strings.Builder
	for f := range 10 {
		name := fmt.Sprintf("pkg%d/file%d.go", f, f)
		var b bytes.Buffer
		for i := 1; i <= 1000; i++ {
			fmt.Fprintf(&b, "\tline %d of file %d: some code here, x := y + %d\n", i, f, i*f)
		}
		pb.files[name] = b.Bytes()
		lines := strings.SplitAfter(b.String(), "\n")
		fmt.Fprintf(&p, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", name, name, name, name)
		for h := range 10 {
			at := h*100 + 50 // 1-based line that changes
			fmt.Fprintf(&p, "@@ -%d,7 +%d,7 @@\n", at-3, at-3)
			for i := at - 3; i <= at+3; i++ {
				l := lines[i-1]
				if i == at {
					p.WriteString("-" + l)
					p.WriteString("+" + strings.Replace(l, "some code", "changed code", 1))
				} else {
					p.WriteString(" " + l)
				}
			}
		}
	}
	pb.patch = p.String()
	return pb
}

func (pb patchBench) write(b *testing.B, dir string) {
	for name, data := range pb.files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatch applies the same 1,000-line, 100-hunk, 10-file patch
// through file.apply_patch (parse, resolve, read, check, stage with fsync,
// rename, audit to an in-memory sink) and through GNU `patch -p1` on a copy
// of the same files, in the same run. speed_vs_patch is patch's time over
// Corral's: the goal is ≥ 0.5.
func BenchmarkPatch(b *testing.B) {
	if _, err := exec.LookPath("patch"); err != nil {
		b.Fatal("GNU patch is needed for the reference (apt-get install patch)")
	}
	pb := newPatchBench()
	if n := strings.Count(pb.patch, "\n"); n < 900 || n > 1100 {
		b.Fatalf("the patch has %d lines", n)
	}
	dir := b.TempDir()
	box, err := sandbox.Open(sandbox.Config{Layout: paths.Layout{Base: filepath.Join(dir, "base"), SharedDir: "share", OutputDir: "output"}, Users: []string{"alice"}, Audit: &auditmem.Log{}})
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	scope, err := box.ScopeDir("alice")
	if err != nil {
		b.Fatal(err)
	}
	ref := filepath.Join(dir, "ref")
	patchFile := filepath.Join(dir, "bench.patch")
	if err := os.WriteFile(patchFile, []byte(pb.patch), 0o644); err != nil {
		b.Fatal(err)
	}
	var corral, gnu time.Duration
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pb.write(b, scope)
		os.RemoveAll(ref)
		pb.write(b, ref)
		b.StartTimer()

		t0 := time.Now()
		res, err := New(box).ApplyPatch(ctx, alice, PatchArgs{Patch: pb.patch})
		corral += time.Since(t0)
		if err != nil || len(res.Files) != 10 {
			b.Fatalf("apply_patch: %v %+v", err, res)
		}

		t0 = time.Now()
		cmd := exec.Command("patch", "-p1", "-s", "-d", ref, "-i", patchFile)
		out, err := cmd.CombinedOutput()
		gnu += time.Since(t0)
		if err != nil {
			b.Fatalf("patch -p1: %v %s", err, out)
		}

		if i == 0 {
			b.StopTimer()
			for name := range pb.files {
				x, _ := os.ReadFile(filepath.Join(scope, name))
				y, _ := os.ReadFile(filepath.Join(ref, name))
				if !bytes.Equal(x, y) || bytes.Equal(x, pb.files[name]) {
					b.Fatalf("%s: Corral and patch disagree, or nothing changed", name)
				}
			}
			b.StartTimer()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(corral.Microseconds())/n, "corral_µs/op")
	b.ReportMetric(float64(gnu.Microseconds())/n, "patch_µs/op")
	b.ReportMetric(float64(gnu)/float64(corral), "speed_vs_patch")
}

// BenchmarkPatchInMemory is the same patch parsed and applied by package
// patch alone, with no file system: the floor of file.apply_patch.
func BenchmarkPatchInMemory(b *testing.B) {
	pb := newPatchBench()
	b.SetBytes(int64(len(pb.patch)))
	for b.Loop() {
		p, err := patch.Parse(pb.patch)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range p.Files {
			if _, err := f.Apply(context.Background(), pb.files[f.Path]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
