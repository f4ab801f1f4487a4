// SPDX-License-Identifier: Apache-2.0

// Package pkgtest holds the tests of what packaging/ ships: the version
// scheme, the package's metadata files and the AppArmor profile. It has
// no code of its own.
package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"corral/core/testkit/needs"
)

// root is the top of the repository.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fileVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// dpkgLess reports whether Debian sorts a before b.
func dpkgLess(t *testing.T, a, b string) bool {
	t.Helper()
	return exec.Command("dpkg", "--compare-versions", a, "lt", b).Run() == nil
}

// TestVersionsSortInBuildOrder builds versions with packaging/version.sh
// in a throwaway repository, commit after commit, and has dpkg compare
// them: each later build is a later version, the tagged release is the
// plain VERSION, and the builds after it sort after it. (The scheme it
// replaces, the bare hash, failed: dpkg sorts 26baa1b after 9c1d2e3 or
// not by chance.)
func TestVersionsSortInBuildOrder(t *testing.T) {
	needs.Tool(t, "dpkg", "dpkg")
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "packaging"), 0o755)
	script, err := os.ReadFile(filepath.Join(root(t), "packaging", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "packaging", "version.sh"), script, 0o755)
	os.WriteFile(filepath.Join(repo, "VERSION"), []byte("0.1.0\n"), 0o644)
	git := func(date string, args ...string) string {
		env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date, "TZ=Asia/Tokyo"}
		return run(t, repo, env, "git", args...)
	}
	version := func() string { return run(t, repo, []string{"TZ=America/New_York"}, "sh", "packaging/version.sh") }
	git("", "init", "-q")
	git("2026-11-27T10:00:00Z", "add", ".")
	git("2026-11-27T10:00:00Z", "commit", "-qm", "one")
	git("2026-11-27T10:00:00Z", "tag", "v0.1.0")
	release := version()
	if release != "0.1.0" {
		t.Fatalf("the tagged commit's version = %q, want 0.1.0", release)
	}
	// Hashes chosen by chance: several commits, so that one of them
	// starting with a digit and the next with a letter (or the reverse) is
	// likely to be among them.
	var builds []string
	for i, date := range []string{"2026-11-27T10:05:00Z", "2026-11-27T10:05:01Z", "2026-11-28T09:00:00Z", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"} {
		os.WriteFile(filepath.Join(repo, "f"), []byte{byte(i)}, 0o644)
		git(date, "add", "f")
		git(date, "commit", "-qm", "next")
		builds = append(builds, version())
	}
	if want := regexp.MustCompile(`^0\.1\.0\+git20261127100500\.[0-9a-f]{7}$`); !want.MatchString(builds[0]) {
		t.Errorf("first build after the tag = %q, want 0.1.0+git20261127100500.<hash> (the commit time in UTC)", builds[0])
	}
	os.WriteFile(filepath.Join(repo, "f"), []byte("changed"), 0o644)
	dirty := version()
	if dirty != builds[len(builds)-1]+".dirty" {
		t.Errorf("uncommitted build = %q, want %s.dirty", dirty, builds[len(builds)-1])
	}
	order := append(append([]string{release}, builds...), dirty)
	for i := 1; i < len(order); i++ {
		if !dpkgLess(t, order[i-1], order[i]) {
			t.Errorf("dpkg sorts %q before %q; it should come after", order[i], order[i-1])
		}
	}
}

// TestVersionEverywhere: FyneApp.toml and the changelog's latest release
// say VERSION.
func TestVersionEverywhere(t *testing.T) {
	v := fileVersion(t)
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("VERSION = %q, want MAJOR.MINOR.PATCH", v)
	}
	toml, err := os.ReadFile(filepath.Join(root(t), "FyneApp.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*Version\s*=\s*"([^"]*)"`).FindSubmatch(toml)
	if m == nil || string(m[1]) != v {
		t.Errorf("FyneApp.toml's Version = %q, want VERSION's %q", m, v)
	}
	needs.Tool(t, "dpkg-parsechangelog", "dpkg-dev")
	if got := run(t, root(t), nil, "dpkg-parsechangelog", "-l", "packaging/changelog", "-S", "Version"); got != v {
		t.Errorf("packaging/changelog's latest version = %q, want VERSION's %q", got, v)
	}
	// A snapshot's changelog starts with the snapshot.
	snap := v + "+git20261127100500.abcdef0"
	out := run(t, root(t), nil, "sh", "-c", "packaging/changelog.sh "+snap+" | dpkg-parsechangelog -l - -S Version")
	if out != snap {
		t.Errorf("changelog.sh %s gives a changelog at %q", snap, out)
	}
}
