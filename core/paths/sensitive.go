package paths

import (
	"path"
	"strings"
)

// Sensitive says, in a few words, why the host path p holds secrets an
// owner should think twice about letting an agent touch — SSH or GPG keys,
// keyrings, password stores, browser profiles, credential files — or ""
// when it is not such a place. home is the owner's home folder. It looks
// at the path's names only (the caller resolves symbolic links first):
// it marks questions, it does not decide them.
func Sensitive(p, home string) string {
	if home != "" {
		for _, d := range sensitiveDirs {
			if Within(p, path.Join(home, d.dir)) {
				return d.why
			}
		}
	}
	if Within(p, "/etc/ssh") || p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/shadow-" || p == "/etc/gshadow-" || Within(p, "/root") {
		return "system secrets"
	}
	base := path.Base(p)
	for _, f := range sensitiveFiles {
		if f.match(base) {
			return f.why
		}
	}
	return ""
}

var sensitiveDirs = []struct{ dir, why string }{
	{".ssh", "SSH keys"},
	{".gnupg", "GPG keys"},
	{".local/share/keyrings", "the desktop keyring"},
	{".local/share/kwalletd", "the desktop keyring"},
	{".password-store", "a password store"},
	{".config/keepassxc", "a password manager"},
	{".mozilla", "a browser profile (saved passwords, cookies)"},
	{"snap/firefox", "a browser profile (saved passwords, cookies)"},
	{".config/google-chrome", "a browser profile (saved passwords, cookies)"},
	{".config/chromium", "a browser profile (saved passwords, cookies)"},
	{".config/BraveSoftware", "a browser profile (saved passwords, cookies)"},
	{".config/microsoft-edge", "a browser profile (saved passwords, cookies)"},
	{".aws", "cloud credentials"},
	{".azure", "cloud credentials"},
	{".config/gcloud", "cloud credentials"},
	{".kube", "cluster credentials"},
	{".docker", "registry credentials"},
	{".config/gh", "GitHub credentials"},
	{".local/share/corral", "Corral's own data"},
	{".config/corral", "Corral's own settings"},
}

type fileRule struct {
	name, prefix, suffix string
	why                  string
}

func (f fileRule) match(base string) bool {
	switch {
	case f.name != "":
		return base == f.name
	case f.prefix != "":
		return strings.HasPrefix(base, f.prefix)
	}
	return strings.HasSuffix(base, f.suffix)
}

var sensitiveFiles = []fileRule{
	{name: ".env", why: "a credentials file"},
	{prefix: ".env.", why: "a credentials file"},
	{name: ".netrc", why: "saved passwords"},
	{name: ".pgpass", why: "saved passwords"},
	{name: ".git-credentials", why: "saved passwords"},
	{name: ".npmrc", why: "registry credentials"},
	{name: ".pypirc", why: "registry credentials"},
	{name: "credentials", why: "a credentials file"},
	{name: "credentials.json", why: "a credentials file"},
	{prefix: "id_rsa", why: "an SSH key"},
	{prefix: "id_ed25519", why: "an SSH key"},
	{prefix: "id_ecdsa", why: "an SSH key"},
	{suffix: ".pem", why: "a key or certificate"},
	{suffix: ".key", why: "a private key"},
	{suffix: ".kdbx", why: "a password database"},
	{suffix: ".p12", why: "a key or certificate"},
	{suffix: ".pfx", why: "a key or certificate"},
}
