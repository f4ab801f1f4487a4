package words

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"corral/core/policy"
)

// surfaces are the files whose strings the owner reads: the dashboard
// and phone page (one web app), the native dialog and tray, the CLI, the
// server's own pages, and the owner's documents.
func surfaces(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []string
	for _, glob := range []string{"assets/web/js/*.js", "assets/web/js/*/*.js", "assets/web/js/*/*/*.js", "assets/web/*.html", "ui/*.go", "app/approve.go", "app/cli.go",
		"app/trayundo.go", "app/pairing/*.go", "app/server/login.go", "app/server/web.go", "docs/owner.md", "docs/security.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil || len(m) == 0 {
			t.Fatalf("no surface file %s (%v)", glob, err)
		}
		files = append(files, m...)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "words.js" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Not words for the owner: an HTTP header.
		src := strings.ReplaceAll(string(b), `Header().Set("Allow"`, "")
		out[strings.TrimPrefix(f, root+string(filepath.Separator))] = src
	}
	return out
}

// literals are the quoted strings of a source file and the text between
// HTML tags.
var literalRe = regexp.MustCompile("'([^'\\n]*)'|\"([^\"\\n]*)\"|`([^`]*)`|>([^<>\\n]+)<")

func literals(src string) []string {
	var out []string
	for _, m := range literalRe.FindAllStringSubmatch(src, -1) {
		for _, g := range m[1:] {
			if s := strings.TrimSpace(g); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

var (
	// A label for an answer: "Allow once", "Always deny" …
	choiceRe = regexp.MustCompile(`^(Allow|Deny|Always)( [a-z]+){0,3}$`)
	// A label for how long "always" lasts: "for 7 days", "1 day", "forever".
	lifetimeRe = regexp.MustCompile(`^((for )?\d+ (minutes?|hours?|days?|weeks?)|forever)$`)
)

// Every surface names Corral's concepts in the table's words: no phrasing
// in Banned, every answer label a row of policy's choices, every lifetime
// label one of Lifetimes.
func TestSurfaces(t *testing.T) {
	var labels, lives []string
	for _, c := range policy.AllChoices() {
		labels = append(labels, c.Label)
	}
	for _, l := range Lifetimes {
		lives = append(lives, l.Label)
	}
	for name, src := range surfaces(t) {
		for bad, use := range Banned {
			if strings.Contains(src, bad) {
				t.Errorf("%s says %q: use %q (core/words)", name, bad, use)
			}
		}
		for _, s := range literals(src) {
			if choiceRe.MatchString(s) && !slices.Contains(labels, s) {
				t.Errorf("%s names an answer %q, which is not one of %q (core/policy's choices)", name, s, labels)
			}
			// links.js offers how long a link lasts, not an answer.
			if lifetimeRe.MatchString(s) && !slices.Contains(lives, s) && name != filepath.Join("assets", "web", "js", "lib", "links.js") {
				t.Errorf("%s names a lifetime %q, which is not one of %q (core/words.Lifetimes)", name, s, lives)
			}
		}
	}
}

// The guide and the pause banner say the table's promises word for word
// (core/sandbox's TestPromise… hold them against behaviour).
func TestGuideSaysThePromises(t *testing.T) {
	html := surfaces(t)[filepath.Join("assets", "web", "index.html")]
	for _, p := range []string{Network, Secrets, OffLimits, PausedBanner} {
		if !strings.Contains(html, p) {
			t.Errorf("index.html does not say %q", p)
		}
	}
}
