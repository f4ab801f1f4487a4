package server

import (
	"testing"
)

// TestDashboardShowsAuditSize: the Activity page says how much room the
// audit log takes on disk and how fast it grows (session.info's
// audit_log), in text, under Trusted Types.
func TestDashboardShowsAuditSize(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	b := newBrowser(t)
	b.login(h)
	b.wait(`(() => { const p = document.querySelector('#audit-size'); return p && !p.hidden && /^Audit log on disk: [0-9.]+ (B|KB|MB) \(database .*\) · [0-9,]+ events in the last hour, [0-9,]+ in the last minute\.$/.test(p.textContent) })()`)
}
