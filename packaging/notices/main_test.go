// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticesCurrent regenerates the notices and the Debian copyright
// file and compares them with the committed ones: a dependency added,
// removed or upgraded without `go run ./packaging/notices` fails here, and
// so does one whose licence is not known.
func TestNoticesCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go-licenses over ./app (builds it from the Go module proxy the first time)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	notices, copyright, err := generate(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"THIRD_PARTY_NOTICES": notices, "copyright": copyright} {
		want, err := os.ReadFile(filepath.Join(root, "packaging", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("packaging/%s is not what `go run ./packaging/notices` writes now: run it, and read the licences it adds", name)
		}
	}
	for _, want := range []string{"github.com/mattn/go-sqlite3", "fyne.io/fyne/v2", "github.com/go-gl/glfw/v3.3/glfw/glfw/*", "License: Bitstream-Vera and OFL-1.1", "License: Zlib"} {
		if !bytes.Contains(copyright, []byte(want)) {
			t.Errorf("copyright lacks %q", want)
		}
	}
}

func TestCheckRefusesUnknownLicence(t *testing.T) {
	ok := []lib{{Name: "a", License: "MIT"}, {Name: "b", License: "BSD-3-Clause"}}
	if err := check(ok); err != nil {
		t.Fatal(err)
	}
	for _, lic := range []string{"Unknown", "GPL-3.0", "AGPL-3.0", ""} {
		err := check(append(ok, lib{Name: "example.com/new", Version: "v1.0.0", License: lic}))
		if err == nil || !strings.Contains(err.Error(), "example.com/new v1.0.0") {
			t.Errorf("licence %q: err = %v, want one naming example.com/new v1.0.0", lic, err)
		}
	}
}

func TestHolders(t *testing.T) {
	text := "Copyright (c) 2014 Yasuhiro Matsumoto\n\nThe above copyright notice and this permission notice\n(c) You must retain, in the Source form\nCopyright [yyyy] [name of copyright owner]\nCopyright © 2003 by Bitstream, Inc.\n"
	got := strings.Join(holders("x", text), "|")
	if want := "2003 by Bitstream, Inc.|2014 Yasuhiro Matsumoto"; got != want {
		t.Errorf("holders = %q, want %q", got, want)
	}
	if got := holders("example.com/x", "no lines"); len(got) != 1 || got[0] != "the example.com/x authors" {
		t.Errorf("holders without lines = %q", got)
	}
}
