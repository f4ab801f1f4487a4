package paths

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// handWritten are the shapes a containment check or a clean-absolute
// check takes when it is written by hand rather than with Within or
// IsCleanAbs: a prefix test followed by a separator test, a prefix with
// "/" appended, a climb out tested as "../", or a path compared with
// its own Clean.
var handWritten = []*regexp.Regexp{
	regexp.MustCompile(`HasPrefix\([^()]+,\s*[^()]+\+\s*"/"\)`),
	regexp.MustCompile(`HasPrefix\([^()]+,\s*[^()]+\+\s*string\(filepath\.Separator\)\)`),
	regexp.MustCompile(`HasPrefix\([^()]+,\s*"\.\./"\)`),
	regexp.MustCompile(`\[len\([^()]+\)\]\s*==\s*('/'|filepath\.Separator)`),
	regexp.MustCompile(`Clean\(\w+\)\s*!=\s*\w+\s*$|\|\|\s*(path|filepath)\.Clean\(\w+\)\s*!=`),
}

// TestOneContainmentCheck: outside this package, no code in core asks
// "is this path inside that folder" or "is this path absolute and
// clean" by hand; Within and IsCleanAbs are the one place each (their
// doc says why). It failed on the hand-written checks in core/links,
// core/undo, core/execbox/argv.go and core/policy's second isCleanAbs.
func TestOneContainmentCheck(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || filepath.Base(filepath.Dir(p)) == "paths" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, re := range handWritten {
				if re.MatchString(line) {
					t.Errorf("%s:%d: a containment or clean-path check by hand (use paths.Within or paths.IsCleanAbs): %s", p, i+1, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
