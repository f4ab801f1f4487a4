package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"corral/core/policy"
)

// TestGrepOutsideLeavesSecretsOut (red team): the owner allows an agent
// to read a folder outside its own (one answer, or a folder-wide rule such
// as one on /etc); a folder-wide answer never covers a secret, and since
// the red team's policy fix neither does a folder rule, so reading
// project/.env or /etc/gshadow on its own is asked. But file.grep over
// the folder read every file in it: through the real binary, a grep of
// /etc for "root:" under a rule on /etc returned /etc/gshadow's line.
// A search of a folder allowed by the owner now leaves out the lines of
// files paths.Sensitive marks; other files' lines are still found, and
// the agent's own folder is searched as before.
func TestGrepOutsideLeavesSecretsOut(t *testing.T) {
	w := newWorld(t)
	proj := filepath.Join(w.outside, "project")
	os.MkdirAll(proj, 0o755)
	for name, body := range map[string]string{
		".env":      "API_KEY=sekret-env\n",
		"id_rsa":    "API_KEY=sekret-ssh\n",
		"notes.txt": "API_KEY is read from the environment\n",
	} {
		os.WriteFile(filepath.Join(proj, name), []byte(body), 0o644)
	}
	ans := &answerer{p: w.pol, d: policy.AllowOnce}
	defer w.pol.Subscribe(ans)()
	res, err := w.box.Grep(context.Background(), alice, GrepArgs{Path: proj, Pattern: "API_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || res.Matches[0].Path != filepath.Join(proj, "notes.txt") {
		t.Errorf("matches %+v, want only notes.txt's line", res.Matches)
	}
	// In the agent's own folder, its own .env is its own.
	if _, err := w.box.Write(context.Background(), alice, WriteArgs{Path: "app/.env", Content: "API_KEY=mine\n"}); err != nil {
		t.Fatal(err)
	}
	res, err = w.box.Grep(context.Background(), alice, GrepArgs{Path: "app", Pattern: "API_KEY"})
	if err != nil || len(res.Matches) != 1 {
		t.Errorf("own folder: %+v %v", res.Matches, err)
	}
}
