package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
)

// The dashboard keeps no copy of the audit log's words: the owner's
// session.info carries every operation with its label and groups, and the
// decisions, as core/audit defines them; an agent's does not.
func TestSessionInfoCarriesTheAuditVocabulary(t *testing.T) {
	h := start(t, "")
	info := rpcCall[sessionInfo](t, h.dial(ownerToken), "session.info", nil)
	if len(info.Operations) != len(audit.Operations) {
		t.Fatalf("%d operations, want %d", len(info.Operations), len(audit.Operations))
	}
	for i, o := range audit.Operations {
		got := info.Operations[i]
		if got.Op != o.Name || got.Label != o.Label || !slices.Equal(got.Groups, o.Groups) {
			t.Errorf("operation %d: %+v, want %+v", i, got, o)
		}
	}
	if len(info.Decisions) != 3 || info.Decisions[1].Decision != "deny" || info.Decisions[1].Label != "Denied" {
		t.Errorf("decisions: %+v", info.Decisions)
	}
	agent := rpcCall[sessionInfo](t, h.dial(aliceKey), "session.info", nil)
	if agent.Operations != nil || agent.Decisions != nil {
		t.Errorf("an agent got the vocabulary: %+v", agent)
	}
}

// The dashboard's menus and rows use the server's words: an operation the
// dashboard never had a label for before the table moved to the server
// (config.reload) is offered by its label, and a row shows it.
func TestDashboardUsesTheServersWords(t *testing.T) {
	chromiumPath(t)
	h := start(t, "")
	if err := h.srv.record(t.Context(), "owner", "config.reload", "/x/config.toml", "reloaded"); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.loginAt(h, "#activity?own=1&decision=allow")
	b.wait(`[...document.querySelectorAll('#f-op option')].some((o) => o.value === 'config.reload' && o.textContent.startsWith('Reloaded the settings'))`)
	b.wait(`[...document.querySelectorAll('#audit-table tbody td.t-op')].some((td) => td.textContent === 'Reloaded the settings')`)
	b.wait(`document.querySelector('#f-decision').value === 'allow' && document.querySelector('#f-decision').selectedOptions[0].textContent === 'Allowed'`)
	b.noPageErrors()
}

// The table is in time order, not commit order: an event whose approval
// waited is recorded after events that happened meanwhile, yet shows where
// its time puts it, in the first load and when it arrives on the live tail.
func TestDashboardRowsInTimeOrder(t *testing.T) {
	chromiumPath(t)
	h := start(t, "")
	now := time.Now().UTC().Truncate(time.Second)
	rec := func(ago time.Duration, target string) {
		t.Helper()
		_, err := h.store.Record(context.Background(), audit.Event{Time: now.Add(-ago), Client: "Claude", User: "alice",
			Op: "file.write", Target: target, Decision: audit.Allow, DecidedBy: audit.ByOwner})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec(3*time.Minute, "a")
	rec(time.Minute, "b")
	rec(5*time.Minute, "c-waited") // asked 5 minutes ago, answered just now
	rec(time.Minute, "d-same-time-as-b")
	b := newBrowser(t)
	b.loginAt(h, "#activity?live=1")
	targets := func() string {
		return strings.Join(js[[]string](b, `[...document.querySelectorAll('#audit-table tbody tr .t-target')].map((td) => td.textContent)`), " ")
	}
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 4`)
	if got := targets(); got != "d-same-time-as-b b a c-waited" {
		t.Fatalf("rows %q", got)
	}
	rec(2*time.Minute, "e-waited")
	rec(0, "f-now")
	b.wait(`document.querySelectorAll('#audit-table tbody tr').length === 6`)
	if got := targets(); got != "f-now d-same-time-as-b b e-waited a c-waited" {
		t.Errorf("rows after the live tail %q", got)
	}
	if n := js[int](b, `document.querySelectorAll('#audit-table tbody tr.fresh').length`); n != 2 {
		t.Errorf("%d rows marked new, want 2", n)
	}
	b.noPageErrors()
}
