package patch

import (
	"context"
	"strings"
	"testing"
)

// pathological is the red team's case (issue 25): a file of fileLines
// identical lines and a Codex hunk of hunkLines lines that match
// everywhere but in its last line, which is nowhere in the file. Every
// start position matches all but one line of the hunk.
func pathological(fileLines, hunkLines int) (content []byte, f *File) {
	content = []byte(strings.Repeat("\tx := 1\n", fileLines))
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: a.go\n@@\n")
	for range hunkLines - 1 {
		p.WriteString(" \tx := 1\n")
	}
	p.WriteString("-\tnowhere()\n+\tgone()\n*** End Patch\n")
	pt, err := Parse(p.String())
	if err != nil {
		panic(err)
	}
	return content, &pt.Files[0]
}

func BenchmarkApplyPathological(b *testing.B) {
	content, f := pathological(60000, 30000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Apply(context.Background(), content); err == nil {
			b.Fatal("the hunk matched")
		}
	}
}
