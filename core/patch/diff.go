package patch

import (
	"bytes"
	"fmt"
	"strings"
)

// maxDiffCells bounds the table Diff fills for the part of two texts
// that differs (lines × lines); past it the differing part is shown as
// one hunk that removes the old lines and adds the new ones.
const maxDiffCells = 4 << 20

// Diff returns a unified diff (diff -u, 3 lines of context) from old
// to new, named a/oldName and b/newName, or "" when they are equal. It
// reads as Parse reads it. Lines are compared exactly; a last line
// without a newline is marked "\ No newline at end of file".
func Diff(oldName, newName string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	// The common start and end need no table.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]byte, 0, len(a)+len(b)) // ' ', '-', '+' per line, in order
	for range pre {
		ops = append(ops, ' ')
	}
	ops = append(ops, lcsOps(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for range suf {
		ops = append(ops, ' ')
	}

	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", oldName, newName)
	const ctx = 3
	// Walk the ops, grouping changes closer than 2*ctx lines into a hunk.
	type pos struct{ op, ai, bi int }
	var at []pos
	ai, bi := 0, 0
	for i, o := range ops {
		at = append(at, pos{i, ai, bi})
		switch o {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i] == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end] != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run] == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(len(ops), end+ctx)
				break
			}
			end = run
		}
		as, bs := at[start].ai, at[start].bi
		an, bn := 0, 0
		for _, o := range ops[start:end] {
			if o != '+' {
				an++
			}
			if o != '-' {
				bn++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(as, an), hunkRange(bs, bn))
		for j := start; j < end; j++ {
			var line string
			switch ops[j] {
			case '+':
				line = b[at[j].bi]
			default:
				line = a[at[j].ai]
			}
			out.WriteByte(ops[j])
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits b after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// lcsOps returns the edit of a into b along a longest common subsequence
// of lines, deletions before insertions at each change.
func lcsOps(a, b []string) []byte {
	n, m := len(a), len(b)
	if n == 0 || m == 0 || n*m > maxDiffCells {
		ops := make([]byte, 0, n+m)
		for range n {
			ops = append(ops, '-')
		}
		for range m {
			ops = append(ops, '+')
		}
		return ops
	}
	// l[i][j]: LCS length of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	ops := make([]byte, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, ' ')
			i++
			j++
		case l[i+1][j] >= l[i][j+1]:
			ops = append(ops, '-')
			i++
		default:
			ops = append(ops, '+')
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, '-')
	}
	for ; j < m; j++ {
		ops = append(ops, '+')
	}
	return ops
}
