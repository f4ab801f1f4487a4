package paths

import "testing"

func TestSensitive(t *testing.T) {
	home := "/home/ann"
	for p, want := range map[string]bool{
		// secrets
		"/home/ann/.ssh":                           true,
		"/home/ann/.ssh/id_ed25519":                true,
		"/home/ann/.gnupg/private-keys-v1.d/x":     true,
		"/home/ann/.mozilla/firefox/x/logins.json": true,
		"/home/ann/.config/google-chrome/Default":  true,
		"/home/ann/.password-store/bank.gpg":       true,
		"/home/ann/.aws/credentials":               true,
		"/home/ann/project/.env":                   true,
		"/home/ann/project/.env.production":        true,
		"/srv/app/server.key":                      true,
		"/home/ann/vault.kdbx":                     true,
		"/etc/shadow":                              true,
		"/etc/shadow-":                             true, // its backup, as readable to root (red team: file.find listed it)
		"/etc/gshadow-":                            true,
		"/etc/ssh/ssh_host_ed25519_key":            true,
		"/home/ann/.local/share/corral/corral.db":  true,
		// ordinary
		"/home/ann/Documents/report.txt": false,
		"/home/ann/.sshrc":               false,
		"/home/ann/ssh/notes":            false,
		"/home/ann/.environment":         false,
		"/etc/hostname":                  false,
		"/home/annie/.ssh/id_rsa":        true, // another home, but still a key by name
		"/home/annie/.ssh/config":        false,
	} {
		if got := Sensitive(p, home) != ""; got != want {
			t.Errorf("Sensitive(%q) = %q, want sensitive=%v", p, Sensitive(p, home), want)
		}
	}
}
