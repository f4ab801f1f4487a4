package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/config"
)

func TestRootsOverlappingCorralsFilesAreRefused(t *testing.T) {
	home := t.TempDir()
	files := config.Files{
		Config: filepath.Join(home, ".config/corral/config.toml"), DB: filepath.Join(home, ".local/share/corral/corral.db"),
		Secret: filepath.Join(home, ".local/share/corral/secret.key"), OwnerToken: filepath.Join(home, ".local/share/corral/owner.token"),
		Sandbox: filepath.Join(home, ".local/share/corral/sandbox"),
	}
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	os.MkdirAll(filepath.Join(home, ".local/share/corral/sandbox"), 0o700)
	os.Symlink(filepath.Join(home, ".local"), filepath.Join(home, "Documents", "sneaky"))
	for root, bad := range map[string]bool{
		"~":                                 true, // contains everything
		"~/.local":                          true,
		"~/.local/share/corral/sandbox/bob": true,
		"~/Documents/sneaky":                true, // a symlink to ~/.local
		"~/Documents":                       false,
	} {
		cfgText := "[[sandbox.roots]]\npath = \"" + root + "\"\n"
		cfg, err := config.Parse(files.Config, []byte(cfgText), home, files.Sandbox)
		if err != nil {
			t.Fatal(err)
		}
		err = checkRoots(cfg, files)
		if (err != nil) != bad {
			t.Errorf("root %s: %v, want refused=%v", root, err, bad)
		}
		if err != nil && !strings.Contains(err.Error(), "sandbox.roots[0].path") {
			t.Errorf("root %s: error does not name the key: %v", root, err)
		}
	}
}
