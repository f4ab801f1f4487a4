package links

import (
	"strings"
	"testing"
	"time"
)

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Quarterly Summary":            "quarterly-summary",
		"  Q3 — sales / costs (2026) ": "q3-sales-costs-2026",
		"../../etc/passwd":             "etc-passwd",
		"Café über Straße":             "caf-ber-stra-e",
		"日本語":                          "report",
		"":                             "report",
		"...":                          "report",
		strings.Repeat("ab ", 40):      strings.TrimRight(strings.Repeat("ab-", 20), "-"),
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Quarterly Summary", "../x", "a/b\\c", "\x00", "ß", strings.Repeat("x", 200), "-a-", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		s := Slug(title)
		if s == "" || len(s) > maxSlug || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
			t.Fatalf("Slug(%q) = %q", title, s)
		}
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("Slug(%q) = %q holds %q", title, s, r)
			}
		}
	})
}

func TestReportName(t *testing.T) {
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)
	if got := reportName(now, "Quarterly summary", 1); got != "report_2026-11-25-quarterly-summary" {
		t.Errorf("first: %q", got)
	}
	if got := reportName(now, "Quarterly summary", 2); got != "report_2026-11-25-quarterly-summary-2" {
		t.Errorf("second: %q", got)
	}
	a, b := reportName(now, "x", maxReportTries), reportName(now, "x", maxReportTries)
	if a == b || !strings.HasPrefix(a, "report_2026-11-25-x-") {
		t.Errorf("last tries: %q %q", a, b)
	}
}

func TestStartsWithHeading(t *testing.T) {
	for _, c := range []struct {
		frag, title string
		want        bool
	}{
		{"<h1>Quarterly summary</h1><p>x</p>", "Quarterly summary", true},
		{"\n <!-- made by me -->\n<H1 class=\"t\">Quarterly   <em>Summary</em></H1>", "quarterly summary", true},
		{"<h1>Fish &amp; chips</h1>", "Fish & chips", true},
		{"<h1>Another heading</h1>", "Quarterly summary", false},
		{"<p>intro</p><h1>Quarterly summary</h1>", "Quarterly summary", false},
		{"<h2>Quarterly summary</h2>", "Quarterly summary", false},
		{"<h1x>Quarterly summary</h1x>", "Quarterly summary", false},
	} {
		if got := startsWithHeading(c.frag, c.title); got != c.want {
			t.Errorf("startsWithHeading(%q, %q) = %v", c.frag, c.title, got)
		}
	}
}
