package server

import "testing"

// The owner's methods whose parameters are times (undo.client's since
// and until) refuse a value that is not one in a sentence naming the
// parameter, never in Go's words ("parsing time … as
// "2006-01-02T15:04:05Z07:00"", "Time.UnmarshalJSON: …").
func TestTimeParametersAreRefusedPolitely(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	owner := h.dial(ownerToken)
	const since, until = `Parameter "since" must be a time such as 2026-01-02T15:04:05Z.`, `Parameter "until" must be a time such as 2026-01-02T15:04:05Z.`
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{m("client", "alice-agent", "since", "yesterday"), since},
		{m("client", "alice-agent", "since", 12), since},
		{m("client", "alice-agent", "since", "2026-13-45T99:00:00Z"), since},
		{m("client", "alice-agent", "since", "2026-01-02T15:04:05Z", "until", "now"), until},
	} {
		if e := callErr(t, owner, "undo.client", c.params); e.Data.Kind != "invalid_params" || e.Message != c.want {
			t.Errorf("undo.client %v: %q (%s), want %q", c.params, e.Message, e.Data.Kind, c.want)
		}
	}
}
