package main

import (
	"encoding/json"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"corral/app/client"
)

// TestDialogDenyWithReasonUnderXvfb: the real corral on a virtual
// display; the owner clicks into the approval dialog's reason field,
// types a sentence and presses Enter: the agent's call is denied with
// that sentence, and the audit row keeps it.
func TestDialogDenyWithReasonUnderXvfb(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Xvfb and the real binary (tools from packaging/deps.sh); skipped under -short")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (run packaging/deps.sh): %v", tool, err)
		}
	}
	s := startTray(t, corralBinary(t), startXvfb(t), "")
	agent := s.dial()
	// Until the tray has subscribed to approvals (just after the start-up
	// lines), strict mode refuses at once: ask again until the dialog shows.
	var res <-chan callResult
	deadline := time.Now().Add(30 * time.Second)
	for shown := false; !shown; {
		if time.Now().After(deadline) {
			t.Fatalf("no approval window appeared\n%s", s.out.String())
		}
		res = s.read(agent, "/etc/hostname")
		for waiting := true; waiting && !shown; {
			select {
			case r := <-res:
				if r.err == nil || !strings.Contains(r.err.Error(), "Nobody is there") {
					t.Fatalf("the read returned before anyone answered: %s %v", r.raw, r.err)
				}
				waiting = false
				time.Sleep(200 * time.Millisecond) // poll interval: ask again
			case <-time.After(200 * time.Millisecond):
				id, _ := s.xdotool("search", "--onlyvisible", "--name", "Corral — approval needed")
				shown = id != ""
				if time.Now().After(deadline) {
					t.Fatalf("no approval window appeared\n%s", s.out.String())
				}
			}
		}
	}
	x, y, ok := s.shotWithPrimary("misc-dialog-deny-reason-before", -1) // "Allow once", once the guard has passed
	if !ok {
		t.FailNow()
	}
	// The reason field is the row under the allow buttons: below the
	// button's edge, the first change from the window's background.
	img := s.screenshot("misc-dialog-deny-reason-find")
	same := func(a, b color.Color) bool {
		r1, g1, b1, _ := a.RGBA()
		r2, g2, b2, _ := b.RGBA()
		return r1 == r2 && g1 == g2 && b1 == b2
	}
	// A column inside the button, left of its label.
	x0 := x - 80
	edge := y
	for edge < img.Bounds().Max.Y && same(img.At(x0, edge), img.At(x0, y)) {
		edge++
	}
	bg := img.At(x0, edge+1)
	field := edge + 1
	for field < img.Bounds().Max.Y && same(img.At(x0, field), bg) {
		field++
	}
	if field-edge > 20 {
		t.Fatalf("no reason field under the allow buttons (button edge at y=%d, next change at y=%d)", edge, field)
	}
	if out, err := s.xdotool("mousemove", strconv.Itoa(x0), strconv.Itoa(field+12), "click", "1"); err != nil {
		t.Fatalf("xdotool click: %v %s", err, out)
	}
	if out, err := s.xdotool("type", "--delay", "20", "use the share folder instead"); err != nil {
		t.Fatalf("xdotool type: %v %s", err, out)
	}
	s.settle(nil, nil)
	s.screenshot("misc-native-dialog-deny-reason-xvfb")
	if d := os.Getenv("CORRAL_SHOTS"); d != "" {
		if b, err := os.ReadFile(filepath.Join(shotsDir, "misc-native-dialog-deny-reason-xvfb.png")); err == nil {
			os.WriteFile(filepath.Join(d, "native-dialog-deny-reason-xvfb.png"), b, 0o644)
		}
	}
	select {
	case r := <-res:
		t.Fatalf("the call returned before Enter: %s %v", r.raw, r.err)
	default:
	}
	if out, err := s.xdotool("key", "Return"); err != nil {
		t.Fatalf("xdotool key: %v %s", err, out)
	}
	select {
	case r := <-res:
		ce, _ := r.err.(*client.Error)
		if want := "The owner denied access to /etc/hostname: use the share folder instead."; ce == nil || ce.Message != want {
			t.Fatalf("after Enter in the reason field: %s %v, want %q", r.raw, r.err, want)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the agent's call still waits after Enter in the reason field")
	}
	s.waitNoDialog()
	raw, err := s.owner().Call(t.Context(), "audit.query", map[string]any{"op": "file.read", "limit": 5})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Events []struct {
			Target string `json:"target"`
			Detail string `json:"detail"`
		}
	}
	json.Unmarshal(raw, &page)
	found := false
	for _, e := range page.Events {
		if e.Target == "/etc/hostname" && strings.Contains(e.Detail, "owner's reason: use the share folder instead") {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit row keeps the reason: %s", raw)
	}
	s.stop()
}
