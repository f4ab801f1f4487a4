package links

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var (
	now     = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	maxLife = 8760 * time.Hour
)

func signer(t testing.TB, b byte) *Signer {
	t.Helper()
	s, err := NewSigner(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerify(t *testing.T) {
	s := signer(t, 1)
	file := s.Sign(Claims{Scope: "alice", Path: "output/report.md", Expires: now.Add(time.Hour)})
	folder := s.Sign(Claims{Scope: "alice", Path: "output", Folder: true, Expires: now.Add(time.Hour)})
	share := s.Sign(Claims{Scope: "bob", Path: "share/docs", Folder: true, Expires: now.Add(time.Hour)})
	other := signer(t, 2).Sign(Claims{Scope: "alice", Path: "output/report.md", Expires: now.Add(time.Hour)})

	for _, tc := range []struct {
		name, token, path string
		at                time.Time
		ok                bool
	}{
		{"file", file, "output/report.md", now, true},
		{"file one second before expiry", file, "output/report.md", now.Add(time.Hour - time.Second), true},
		{"file at expiry", file, "output/report.md", now.Add(time.Hour), false},
		{"file other path", file, "output/report.mD", now, false},
		{"file as folder", file, "output/report.md/x", now, false},
		{"folder itself", folder, "output", now, true},
		{"folder child", folder, "output/a/b.txt", now, true},
		{"folder sibling prefix", folder, "outputs/a", now, false},
		{"folder parent", folder, "notes/a", now, false},
		{"share folder", share, "share/docs/x.md", now, true},
		{"share folder sibling", share, "share/docsx", now, false},
		{"other key", other, "output/report.md", now, false},
		{"future beyond max life", s.Sign(Claims{Scope: "alice", Path: "p", Expires: now.Add(maxLife + time.Hour)}), "p", now, false},
		{"changed scope", strings.Replace(file, ".alice.", ".alicf.", 1), "output/report.md", now, false},
		{"changed kind", strings.Replace(file, ".f.", ".d.", 1), "output/report.md", now, false},
		{"changed expiry", strings.Replace(file, ".1795", ".1796", 1), "output/report.md", now, false},
		{"leading zero expiry", strings.Replace(file, ".1795", ".01795", 1), "output/report.md", now, false},
		{"truncated", file[:len(file)-1], "output/report.md", now, false},
		{"extra field", file + ".x", "output/report.md", now, false},
		{"empty", "", "output/report.md", now, false},
		{"v2", "v2" + file[2:], "output/report.md", now, false},
		{"padded mac", file + "=", "output/report.md", now, false},
		{"newline in mac", file[:len(file)-5] + "\n" + file[len(file)-5:], "output/report.md", now, false},
		{"trailing newline", file + "\n", "output/report.md", now, false},
		{"carriage return in mac", file[:len(file)-5] + "\r" + file[len(file)-5:], "output/report.md", now, false},
		{"path too long", folder, "output" + strings.Repeat("/"+strings.Repeat("x", 250), 17), now, false},
		{"path just long enough", folder, "output" + strings.Repeat("/"+strings.Repeat("x", 250), 16), now, true},
	} {
		_, err := s.Verify(tc.token, tc.path, tc.at, maxLife)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err=%v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// One changed character anywhere in the token breaks it.
	for i := range file {
		b := []byte(file)
		b[i] ^= 1
		if _, err := s.Verify(string(b), "output/report.md", now, maxLife); err == nil {
			t.Errorf("token with byte %d flipped verified", i)
		}
	}
	c, err := s.Verify(folder, "output/a", now, maxLife)
	if err != nil || c.Path != "output" || !c.Folder || c.Scope != "alice" || !c.Expires.Equal(now.Add(time.Hour)) {
		t.Errorf("claims: %+v %v", c, err)
	}
}

func TestAncestors(t *testing.T) {
	got := strings.Join(ancestors("a/b/c"), ",")
	if got != "a/b/c,a/b,a,." {
		t.Errorf("ancestors: %s", got)
	}
	if got := strings.Join(ancestors("/srv/x"), ","); got != "/srv/x,/srv,/" {
		t.Errorf("absolute ancestors: %s", got)
	}
}

// FuzzVerify: no token or path panics Verify, and nothing verifies except
// what the signer produced for that path (or below a folder it signed).
func FuzzVerify(f *testing.F) {
	s := signer(f, 7)
	good := s.Sign(Claims{Scope: "alice", Path: "output", Folder: true, Expires: now.Add(time.Hour)})
	f.Add(good, "output/x")
	f.Add("v1.00000000.a.f.1.AAAA", "a")
	f.Add("v1..alice.f.99999999999999999999.", "output")
	f.Add(good+"\n", "output/x")
	f.Add(good[:len(good)-3]+"\r\n"+good[len(good)-3:], "output/x")
	f.Fuzz(func(t *testing.T, token, path string) {
		c, err := s.Verify(token, path, now, maxLife)
		if err != nil {
			return
		}
		if token != s.Sign(c) {
			t.Fatalf("verified a token the signer would not produce: %q", token)
		}
		if c.Path != path && c.Path != "." && !strings.HasPrefix(path, strings.TrimSuffix(c.Path, "/")+"/") {
			t.Fatalf("token for %q verified for %q", c.Path, path)
		}
	})
}

// BenchmarkVerifyForgedFolder: the most work a request with a forged
// folder token can cost — a well-formed token (the key id is in every link
// handed out) with a wrong MAC, for the longest path Verify considers, 256
// folders deep: one MAC per ancestor, all failing.
func BenchmarkVerifyForgedFolder(b *testing.B) {
	s := signer(b, 7)
	good := s.Sign(Claims{Scope: "alice", Path: "output", Folder: true, Expires: now.Add(time.Hour)})
	forged := good[:len(good)-43] + strings.Repeat("A", 43)
	path := strings.TrimSuffix(strings.Repeat(strings.Repeat("x", 15)+"/", 256), "/") // 4095 bytes
	for b.Loop() {
		if _, err := s.Verify(forged, path, now, maxLife); err == nil {
			b.Fatal("a forged token verified")
		}
	}
}
