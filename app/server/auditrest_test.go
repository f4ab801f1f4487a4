package server

import (
	"slices"
	"testing"

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
