package ui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// XDGAutostart is the owner's autostart entry: a .desktop file in
// $XDG_CONFIG_HOME/autostart (~/.config/autostart) that desktop sessions
// run at login. Enabling writes it, disabling removes it; an entry that
// says Hidden=true (how some desktops switch one off) counts as disabled
// and is replaced when enabling.
type XDGAutostart struct {
	Dir  string // the autostart folder
	Exec string // the command line that starts the tray
}

// autostartFile is the entry's name; packaging/corral-autostart.desktop
// has the same content with Exec=corral.
const autostartFile = "corral.desktop"

// NewXDGAutostart returns the entry for getenv's XDG_CONFIG_HOME (or
// HOME/.config) that starts exe.
func NewXDGAutostart(getenv func(string) string, exe string) (XDGAutostart, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return XDGAutostart{}, errors.New("autostart: neither XDG_CONFIG_HOME nor HOME is set")
		}
		dir = filepath.Join(home, ".config")
	}
	return XDGAutostart{Dir: filepath.Join(dir, "autostart"), Exec: execQuote(exe)}, nil
}

func (x XDGAutostart) path() string { return filepath.Join(x.Dir, autostartFile) }

// Enabled reports whether the entry exists and is not hidden.
func (x XDGAutostart) Enabled() bool {
	b, err := os.ReadFile(x.path())
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.EqualFold(strings.TrimSpace(line), "Hidden=true") {
			return false
		}
	}
	return true
}

// SetEnabled writes or removes the entry.
func (x XDGAutostart) SetEnabled(on bool) error {
	if !on {
		if err := os.Remove(x.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove autostart entry: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(x.Dir, 0o755); err != nil {
		return fmt.Errorf("autostart folder: %w", err)
	}
	tmp := x.path() + ".tmp"
	if err := os.WriteFile(tmp, []byte(AutostartEntry(x.Exec)), 0o644); err != nil {
		return fmt.Errorf("write autostart entry: %w", err)
	}
	if err := os.Rename(tmp, x.path()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write autostart entry: %w", err)
	}
	return nil
}

// AutostartEntry is the autostart .desktop file that runs exec.
func AutostartEntry(exec string) string {
	return `[Desktop Entry]
Type=Application
Name=Corral
GenericName=Agent sandbox
Comment=Keeps AI agents in a fenced sandbox and asks before they cross the fence
Exec=` + exec + `
Icon=corral
Terminal=false
Categories=Utility;Security;
X-GNOME-Autostart-enabled=true
X-GNOME-Autostart-Delay=3
`
}

// execQuote quotes a path for a .desktop Exec key when it needs it.
func execQuote(p string) string {
	if !strings.ContainsAny(p, " \t\"'\\$`") {
		return p
	}
	r := strings.NewReplacer(`\`, `\\\\`, `"`, `\\"`, "`", "\\\\`", `$`, `\\$`)
	return `"` + r.Replace(p) + `"`
}
