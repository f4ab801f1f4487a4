package server

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEveryMethodDocumented: docs/protocol.md, the contract as Corral
// implements it, names every method the server answers (in backquotes),
// so a method added without its documentation fails here.
func TestEveryMethodDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, "")
	var missing []string
	for name := range h.srv.methodTable() {
		if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), "`"+name+" ") {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/protocol.md does not name these methods: %s", strings.Join(missing, ", "))
	}
}
