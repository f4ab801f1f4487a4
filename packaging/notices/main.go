// SPDX-License-Identifier: Apache-2.0

// Command notices writes the third-party notices of everything linked into
// the corral binary: packaging/THIRD_PARTY_NOTICES (every licence text)
// and packaging/copyright (the same, in Debian's machine-readable
// copyright format, shipped as /usr/share/doc/corral/copyright).
//
//	go run ./packaging/notices        # from the top of the repository
//
// The licences are found and named by github.com/google/go-licenses (its
// classifier), run over ./app; the Go standard library's licence comes
// from the toolchain. Next to each package's licence, the licence files
// of the folders it embeds or compiles that hold no Go package (Fyne's
// fonts, GLFW's C sources) are copied too.
//
// Guarantees: a package whose licence go-licenses cannot name, or names
// as one not in [known], is an error: a new dependency fails
// TestNoticesCurrent until its licence has been looked at. The output
// depends only on the module versions in go.sum, not on the machine.
//
// Not guaranteed: licences of C libraries linked from the system (libc,
// libGL, X11) are not listed; they come with their own Debian packages.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// goLicenses is the version of the tool run through the Go module proxy.
const goLicenses = "github.com/google/go-licenses@v1.6.0"

// known are the licences a dependency may have without a second look, as
// go-licenses names them.
var known = map[string]bool{
	"Apache-2.0": true, "MIT": true, "BSD-2-Clause": true, "BSD-3-Clause": true,
	"ISC": true, "MPL-2.0": true, "Zlib": true,
}

// lib is one library (a package tree with its own licence) in the binary.
type lib struct {
	Name, Version, License string
	Text                   string
	Extra                  []extra // licence files of embedded, non-Go folders
}

type extra struct{ Rel, Text string }

func main() {
	out := flag.String("out", "packaging", "folder to write THIRD_PARTY_NOTICES and copyright into")
	flag.Parse()
	notices, copyright, err := generate(context.Background(), ".")
	if err == nil {
		err = os.WriteFile(filepath.Join(*out, "THIRD_PARTY_NOTICES"), notices, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(*out, "copyright"), copyright, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
}

// generate runs go-licenses in the module at root and renders both files.
func generate(ctx context.Context, root string) (notices, copyright []byte, err error) {
	libs, err := collect(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	if err := check(libs); err != nil {
		return nil, nil, err
	}
	goText, err := goLicense(ctx)
	if err != nil {
		return nil, nil, err
	}
	own, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return nil, nil, err
	}
	if !strings.Contains(string(own), "Apache License") || !strings.Contains(string(own), "Version 2.0") {
		return nil, nil, errors.New("LICENSE is not the Apache License 2.0")
	}
	return renderNotices(libs, goText), renderCopyright(libs, goText), nil
}

// check fails on a library whose licence is unknown or not in known.
func check(libs []lib) error {
	var bad []string
	for _, l := range libs {
		if !known[l.License] {
			bad = append(bad, fmt.Sprintf("%s %s (licence %q)", l.Name, l.Version, l.License))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("no known licence for %s: read it, and if it allows shipping Corral under Apache-2.0, add its name to known in packaging/notices", strings.Join(bad, ", "))
	}
	return nil
}

const template = "{{range .}}{{.Name}}\t{{.Version}}\t{{.LicenseName}}\t{{.LicensePath}}\n{{end}}"

// collect builds go-licenses, runs it offline over ./app and reads each
// licence named.
func collect(ctx context.Context, root string) ([]lib, error) {
	tmp, err := os.MkdirTemp("", "corral-notices-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	install := exec.CommandContext(ctx, "go", "install", goLicenses)
	install.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=")
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go install %s: %v\n%s", goLicenses, err, out)
	}
	tpl := filepath.Join(tmp, "libs.tpl")
	if err := os.WriteFile(tpl, []byte(template), 0o644); err != nil {
		return nil, err
	}
	run := exec.CommandContext(ctx, filepath.Join(tmp, "go-licenses"), "report", "--ignore", "corral", "--template", tpl, "./app")
	run.Dir = root
	// Offline: the modules are in the cache already (go.sum); the licence
	// URLs go-licenses looks up on the web are not used, so its lookups go
	// to a closed port on loopback and fail at once.
	run.Env = append(os.Environ(), "GOPROXY=off", "HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "NO_PROXY=", "no_proxy=")
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		return nil, fmt.Errorf("go-licenses report: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	pkgDirs, err := packageDirs(ctx, root)
	if err != nil {
		return nil, err
	}
	var libs []lib
	mains := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 4 && f[3] != "" {
			mains[f[3]] = true
		}
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("go-licenses report: odd line %q", line)
		}
		l := lib{Name: f[0], Version: f[1], License: f[2]}
		if f[3] != "" {
			b, err := os.ReadFile(f[3])
			if err != nil {
				return nil, err
			}
			l.Text = string(b)
			l.Extra, err = extras(filepath.Dir(f[3]), mains, pkgDirs)
			if err != nil {
				return nil, err
			}
		}
		libs = append(libs, l)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	return libs, nil
}

// packageDirs are the folders of the packages linked into ./app.
func packageDirs(ctx context.Context, root string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if .Module}}{{.Dir}}{{end}}", "./app")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	return strings.Fields(string(out)), nil
}

var licenseName = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice)`)

// extras are the licence files, other than libraries' own (mains), in the package folders
// under base that are linked in, and in their sub-folders holding no Go
// package (embedded fonts, C sources compiled by cgo).
func extras(base string, mains map[string]bool, pkgDirs []string) ([]extra, error) {
	var out []extra
	for _, dir := range pkgDirs {
		if dir != base && !strings.HasPrefix(dir, base+string(filepath.Separator)) {
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && (hasGo(p) || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if licenseName.MatchString(d.Name()) && !mains[p] {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(base, p)
				out = append(out, extra{Rel: filepath.ToSlash(rel), Text: string(b)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return slices.CompactFunc(out, func(a, b extra) bool { return a.Rel == b.Rel }), nil
}

func hasGo(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// goLicense is the licence of the Go standard library and runtime.
func goLicense(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "LICENSE"))
	return string(b), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

const noticesHead = `Third-party notices for Corral

Corral itself is under the Apache License 2.0 (LICENSE). The corral
program links the Go standard library and the libraries below; their
licences follow, each as its authors wrote it. Written by
` + "`go run ./packaging/notices`" + ` (go-licenses); do not edit by hand.

`

func renderNotices(libs []lib, goText string) []byte {
	var b strings.Builder
	b.WriteString(noticesHead)
	fmt.Fprintf(&b, "  %-50s %s\n", "The Go standard library and runtime", "BSD-3-Clause")
	for _, l := range libs {
		fmt.Fprintf(&b, "  %-50s %s (%s)\n", l.Name, l.License, l.Version)
	}
	section := func(title, text string) {
		fmt.Fprintf(&b, "\n%s\n%s\n\n%s\n", strings.Repeat("=", 72), title, strings.TrimRight(text, "\n "))
	}
	section("The Go standard library and runtime (https://go.dev)", goText)
	for _, l := range libs {
		section(l.Name+" "+l.Version+" — "+l.License, l.Text)
		for _, e := range l.Extra {
			section(l.Name+"/"+e.Rel, e.Text)
		}
	}
	return []byte(b.String())
}

// year is how a copyright line starts its holder: with a year soon.
var year = regexp.MustCompile(`^\D{0,12}(19|20)\d\d`)

var copyrightLine = regexp.MustCompile(`(?i)^\s*(copyright|\(c\)|©)\s*(\(c\)|©)?\s*`)

// holders are the copyright lines of a licence text, or a line naming the
// library's authors when it has none.
func holders(name string, texts ...string) []string {
	var out []string
	for _, t := range texts {
		for line := range strings.SplitSeq(t, "\n") {
			line = strings.TrimSpace(line)
			m := copyrightLine.FindString(line)
			if m == "" {
				continue
			}
			rest := line[len(m):]
			if year.MatchString(rest) {
				out = append(out, rest)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		out = []string{"the " + name + " authors"}
	}
	return out
}

// deb5Text indents a licence text as a DEP-5 field continuation: a space
// before each line, " ." for an empty one.
func deb5Text(text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimRight(strings.ReplaceAll(text, "\r", ""), "\n "), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			b.WriteString(" .\n")
			continue
		}
		b.WriteString(" " + line + "\n")
	}
	return b.String()
}

// pathDir is the folder part of a slash path, with its trailing slash.
func pathDir(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i+1]
	}
	return ""
}

// name is the short name of a licence found beside a library's own (fonts,
// C sources), by a phrase each one has; "custom" for another.
func name(text string) string {
	has := func(s string) bool { return strings.Contains(text, s) }
	switch {
	case has("SIL Open Font License") || has("SIL OPEN FONT LICENSE"):
		return "OFL-1.1"
	case has("Bitstream Vera"):
		return "Bitstream-Vera"
	case has("provided 'as-is'"):
		return "Zlib"
	case has("Apache License"):
		return "Apache-2.0"
	case has("Permission is hereby granted, free of charge"):
		return "MIT"
	case has("Neither the name"):
		return "BSD-3-Clause"
	case has("Redistribution and use in source and binary forms"):
		return "BSD-2-Clause"
	}
	return "custom"
}

func renderCopyright(libs []lib, goText string) []byte {
	var b strings.Builder
	b.WriteString(`Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: corral
Comment: The corral program links the Go libraries below (paths are their
 module folders, as Go names them). The same texts are in
 /usr/share/doc/corral/THIRD_PARTY_NOTICES. Written by
 "go run ./packaging/notices"; do not edit by hand.

Files: *
Copyright: 2026 The Corral authors
License: Apache-2.0

Files: go/*
Copyright: 2009 The Go Authors
License: BSD-3-Clause
`)
	b.WriteString(deb5Text(goText))
	for _, l := range libs {
		// Licence files beside the library's own go in its paragraph.
		names, texts := []string{l.License}, []string{l.Text}
		var others []extra
		for _, e := range l.Extra {
			if pathDir(e.Rel) == "" {
				names, texts = append(names, name(e.Text)), append(texts, e.Text)
			} else {
				others = append(others, e)
			}
		}
		fmt.Fprintf(&b, "\nFiles: %s/*\nCopyright:", l.Name)
		for i, h := range holders(l.Name, texts...) {
			if i > 0 {
				b.WriteString("          ")
			}
			b.WriteString(" " + h + "\n")
		}
		// Apache-2.0's text is in /usr/share/common-licenses (the License
		// paragraph at the end): the other texts only.
		var full []string
		for i, n := range names {
			if n != "Apache-2.0" {
				full = append(full, texts[i])
			}
		}
		fmt.Fprintf(&b, "License: %s\n", strings.Join(names, " and "))
		if len(full) > 0 {
			b.WriteString(deb5Text(strings.Join(full, "\n\n")))
		}
		// Licence files of embedded folders: one paragraph per folder.
		var dirs []string
		byDir := map[string][]extra{}
		for _, e := range others {
			d := pathDir(e.Rel)
			if byDir[d] == nil {
				dirs = append(dirs, d)
			}
			byDir[d] = append(byDir[d], e)
		}
		for _, d := range dirs {
			var names, texts []string
			for _, e := range byDir[d] {
				names = append(names, name(e.Text))
				texts = append(texts, e.Text)
			}
			slices.Sort(names)
			fmt.Fprintf(&b, "\nFiles: %s/%s*\nCopyright:", l.Name, d)
			for i, h := range holders(l.Name, texts...) {
				if i > 0 {
					b.WriteString("          ")
				}
				b.WriteString(" " + h + "\n")
			}
			fmt.Fprintf(&b, "License: %s\n%s", strings.Join(slices.Compact(names), " and "), deb5Text(strings.Join(texts, "\n\n")))
		}
	}
	b.WriteString(`
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
`)
	return []byte(b.String())
}
