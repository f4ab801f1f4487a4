package main

import (
	"context"
	"fmt"
	"image"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"corral/core/testkit/needs"
	"corral/core/testkit/poll"
	"corral/ui/bustest"
)

// The tray's undo window, opened from Recent activity on the real tray
// under Xvfb (no window manager, as in the xfce4-panel set-up), covers the
// activity window beneath it whole, and its empty middle is one colour
// (issue 27: rows showed through around its confirm).
func TestTrayUndoWindowCoversRows(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Xvfb, a D-Bus daemon and the real binary; skipped under -short")
	}
	for tool, pkg := range map[string]string{"Xvfb": "xvfb", "xdotool": "xdotool", "import": "imagemagick", "dbus-daemon": "dbus-x11"} {
		needs.Tool(t, tool, pkg)
	}
	bin := corralBinary(t)
	bus := bustest.Start(t)
	w := newFakeWatcher(t, bus)
	s := startTray(t, bin, startXvfb(t), bus)
	item := w.item(t)
	agent := s.dial()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for i := range 14 { // rows enough to fill the activity window
		if _, err := agent.Call(ctx, "file.write", map[string]any{"path": fmt.Sprintf("notes/n%02d.txt", i), "content": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	menu := menuObject(t, w.conn, item)
	click := func(label string) {
		t.Helper()
		poll.Eventually(t, 10*time.Second, func() bool { return entry(readMenu(t, menu), label).Label != "" }, "menu item %q", label)
		e := entry(readMenu(t, menu), label)
		if c := menu.Call("com.canonical.dbusmenu.Event", 0, e.ID, "clicked", dbus.MakeVariant(""), uint32(0)); c.Err != nil {
			t.Fatalf("click %q: %v", label, c.Err)
		}
	}
	window := func(title string) string {
		t.Helper()
		var id string
		poll.Eventually(t, 10*time.Second, func() bool {
			id, _ = s.xdotool("search", "--onlyvisible", "--name", title)
			return id != ""
		}, "window %q", title)
		return strings.Fields(id)[0]
	}
	geometry := func(id string) image.Rectangle {
		t.Helper()
		out, err := s.xdotool("getwindowgeometry", "--shell", id)
		if err != nil {
			t.Fatalf("geometry: %v %s", err, out)
		}
		v := map[string]int{}
		for _, l := range strings.Fields(out) {
			k, n, _ := strings.Cut(l, "=")
			v[k], _ = strconv.Atoi(n)
		}
		return image.Rect(v["X"], v["Y"], v["X"]+v["WIDTH"], v["Y"]+v["HEIGHT"])
	}
	click("Recent activity…")
	act := geometry(window("Corral — recent activity"))
	s.settle(nil, nil)
	// The undo button fills the bottom row but for the agent picker.
	x, y := act.Min.X+act.Dx()/3, act.Max.Y-22
	s.xdotool("mousemove", strconv.Itoa(x), strconv.Itoa(y), "click", "1")
	uw := geometry(window("Corral — undo last change"))
	img := s.settle(nil, nil)
	s.screenshot("tray-undo-over-activity")
	// Without a window manager both windows sit unframed at the corner:
	// the undo window covers the activity window whole, so none of its
	// rows shows beside the question as if part of it.
	if !act.In(uw) {
		t.Errorf("the undo window %v leaves part of the activity window %v showing", uw, act)
	}
	// The middle of the undo window, below its text and above its
	// buttons: one colour, nothing of the rows beneath.
	mid := image.Rect(uw.Min.X+uw.Dx()/2, uw.Min.Y+uw.Dy()/2, uw.Max.X-20, uw.Max.Y-90).Intersect(img.Bounds())
	if mid.Empty() {
		t.Fatalf("undo window %v, activity %v: no middle to look at", uw, act)
	}
	first := img.At(mid.Min.X, mid.Min.Y)
	var odd int
	for yy := mid.Min.Y; yy < mid.Max.Y; yy++ {
		for xx := mid.Min.X; xx < mid.Max.X; xx++ {
			if img.At(xx, yy) != first {
				odd++
			}
		}
	}
	if odd > 0 {
		t.Errorf("the undo window's middle %v is not one colour: %d pixels differ (rows of the window beneath show through?)", mid, odd)
	}
}
