package documents

import (
	"context"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
)

// TestDocumentBegunBeforeThePause: a document read whose Caller was taken
// before the owner paused its agent (it waited for a document helper's
// slot when the pause landed) reads nothing once it has the slot: it is
// refused, recorded as the pause's. On the old code it was read.
func TestDocumentBegunBeforeThePause(t *testing.T) {
	w := docWorld(t, Config{})
	w.put(t, "page.html", []byte("<p>secret</p>"))
	w.Pol.SetClientPaused(alice.Client, true)
	res, err := w.svc.DocumentRead(context.Background(), alice, DocumentReadArgs{Path: "page.html"})
	if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), "paused this agent") || strings.Contains(res.Content, "secret") {
		t.Errorf("document read: %v, %q; want denied (paused)", err, res.Content)
	}
	evs := w.Sink.Events()
	if last := evs[len(evs)-1]; last.Op != "file.document_read" || last.Decision != audit.Deny || last.DecidedBy != audit.ByPaused {
		t.Errorf("audited as %+v; want the read denied by paused", last)
	}
}
