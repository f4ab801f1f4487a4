package main

import (
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"corral/core/testkit/needs"
	"corral/core/testkit/poll"
	"corral/ui/bustest"
)

// panelConfig is an xfce4-panel with one plugin, the Status Tray (which
// hosts StatusNotifier items and renders their menus with libdbusmenu),
// in a panel at the top-left that is as long as its content.
const panelConfig = `<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="1"/>
      <property name="length-adjust" type="bool" value="true"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="32"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray"/>
  </property>
</channel>
`

// TestTrayMenuUnderXfcePanel runs `corral` next to a real tray host,
// xfce4-panel, on a virtual display, and reads the menu as a dbusmenu
// host does: it fetches the layout again on every LayoutUpdated signal
// and keeps only what it fetched then. That menu must end complete —
// "Quit" at the bottom when idle, and the pending submenu filled with
// the request when an agent asks. Screenshots of the menu the panel
// opens on a click go to shotsDir (tray-xfce-*.png).
func TestTrayMenuUnderXfcePanel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Xvfb, a D-Bus daemon, xfce4-panel and the real binary; skipped under -short")
	}
	for tool, pkg := range map[string]string{"Xvfb": "xvfb", "dbus-daemon": "dbus-x11", "xfce4-panel": "xfce4-panel", "xdotool": "xdotool", "import": "imagemagick"} {
		needs.Tool(t, tool, pkg)
	}
	bin := corralBinary(t)
	display := startXvfb(t)
	bus := bustest.Start(t)
	conn, err := dbus.Connect(bus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	host := followMenus(t, conn)
	startPanel(t, display, bus, conn)

	s := startTray(t, bin, display, bus)
	wait := func(what string, ok func([]trayEntry) bool) []trayEntry {
		t.Helper()
		var items []trayEntry
		poll.EventuallyNil(t, 45*time.Second, func() error {
			if items = host.last(); !ok(items) {
				return fmt.Errorf("the host's menu: %+v", items)
			}
			return nil
		}, "the host's menu to show %s", what)
		return items
	}
	wait("the idle menu with Quit", func(items []trayEntry) bool {
		return len(items) > 0 && strings.HasSuffix(items[0].Label, "· running") && hasLabel(items, "Quit")
	})
	whole := func(menus []rect) bool { return len(menus) == 1 && menus[0].H >= 200 }
	// Up to three opens: in whole-suite runs the panel's first menu now
	// and then stays cut to 59 px with a scroll arrow (3 of about 8 runs
	// on 2026-11-27, not understood; the second menu below never was).
	var menus []rect
	for try := 0; try < 3 && !whole(menus); try++ {
		if menus = s.openTrayMenu("tray-xfce-menu", whole); !whole(menus) {
			t.Logf("open %d of the panel's menu, idle: %+v", try+1, menus)
		}
	}
	if !whole(menus) {
		t.Errorf("the panel's menu, idle: %+v (want one menu, all its nine lines)", menus)
	}

	agent := s.dial()
	res := s.read(agent, "/etc/hostname")
	items := wait("the pending request", func(items []trayEntry) bool {
		for _, e := range items {
			if strings.HasPrefix(e.Label, "Approvals pending (1)") && len(e.Children) == 1 && strings.Contains(e.Children[0].Label, "hostname") {
				return hasLabel(items, "Quit")
			}
		}
		return false
	})
	t.Logf("menu with a request waiting: %+v", items)
	// A second request adds a line to the submenu the host has already.
	res2 := s.read(s.dial(), "/etc/os-release")
	wait("the second pending request", func(items []trayEntry) bool {
		for _, e := range items {
			if strings.HasPrefix(e.Label, "Approvals pending (2)") && len(e.Children) == 2 && strings.Contains(e.Children[1].Label, "os-release") {
				return true
			}
		}
		return false
	})
	// Down selects the first item that can be chosen, the pending
	// submenu; Right opens it.
	// One line of a GTK menu is about 25 pixels high (two lines wait);
	// an empty submenu is a sliver of a few.
	withSubmenu := func(menus []rect) bool { return len(menus) == 2 && menus[1].H >= 40 }
	if menus := s.openTrayMenu("tray-xfce-pending", withSubmenu, "Down", "Right"); !withSubmenu(menus) {
		t.Errorf("the panel's menu with its pending submenu open: %+v (want the menu and a submenu with a line)", menus)
	}
	select {
	case r := <-res:
		t.Fatalf("the request ended before anyone answered: %s %v", r.raw, r.err)
	case r := <-res2:
		t.Fatalf("the second request ended before anyone answered: %s %v", r.raw, r.err)
	default:
	}
	s.stop()
}

// menuHost keeps the layout of the tray menu as a dbusmenu host last
// fetched it: on start and on each LayoutUpdated signal, never between.
type menuHost struct {
	mu    sync.Mutex
	items []trayEntry
}

func (h *menuHost) last() []trayEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.items
}

func followMenus(t *testing.T, conn *dbus.Conn) *menuHost {
	t.Helper()
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("com.canonical.dbusmenu"), dbus.WithMatchMember("LayoutUpdated")); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 64)
	conn.Signal(sigs)
	h := &menuHost{}
	go func() {
		for sig := range sigs {
			if sig.Name != "com.canonical.dbusmenu.LayoutUpdated" {
				continue
			}
			var rev uint32
			var root struct {
				ID       int32
				Props    map[string]dbus.Variant
				Children []dbus.Variant
			}
			if err := conn.Object(sig.Sender, sig.Path).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &root); err != nil {
				continue // the item went away
			}
			h.mu.Lock()
			h.items = parseMenu(root.Children)
			h.mu.Unlock()
		}
	}()
	return h
}

// startPanel starts xfce4-panel (and its settings daemon, xfconfd, with
// the panel's configuration) on display and waits for its tray host.
func startPanel(t *testing.T, display, bus string, conn *dbus.Conn) {
	t.Helper()
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "xfce4", "xfconf", "xfce-perchannel-xml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "xfce4-panel.xml"), []byte(panelConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DISPLAY="+display, "DBUS_SESSION_BUS_ADDRESS="+bus, "XDG_CONFIG_HOME="+cfg, "HOME="+cfg)
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	if xfconfd, err := filepath.Glob("/usr/lib/*/xfce4/xfconf/xfconfd"); err == nil && len(xfconfd) > 0 {
		start(xfconfd[0]) // before the bus would start one with its own environment
		waitName(t, conn, "org.xfce.Xfconf")
	}
	start("xfce4-panel", "--disable-wm-check")
	waitName(t, conn, "org.kde.StatusNotifierWatcher")
}

func waitName(t *testing.T, conn *dbus.Conn, name string) {
	t.Helper()
	poll.Eventually(t, time.Minute, func() bool {
		var owner string
		return conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, name).Store(&owner) == nil
	}, "%s to come on the bus", name)
}

// openTrayMenu clicks the tray icon, the panel's only one, presses keys
// in the menu it opens, waits until the menus on screen are as want says
// (the menu and any submenu open, whole), photographs them, and returns
// the menus on screen, leftmost first, before closing them.
func (s *traySession) openTrayMenu(name string, want func([]rect) bool, keys ...string) []rect {
	s.t.Helper()
	panel := s.windows("xfce4-panel")
	if len(panel) == 0 {
		s.t.Fatal("no panel window")
	}
	p := panel[0]
	if _, err := s.xdotool("mousemove", itoa(p.X+p.W/2), itoa(p.Y+p.H/2), "click", "1"); err != nil {
		s.t.Fatal(err)
	}
	// The menu is mapped, then animates open; each key then changes it.
	// Only the menus are watched: an approval's window beside them counts
	// down.
	s.waitMenus(func(m []rect) bool { return len(m) == 1 })
	area := func() image.Rectangle {
		var r image.Rectangle
		for _, m := range s.menusShown() {
			r = r.Union(image.Rect(m.X, m.Y, m.X+m.W, m.Y+m.H))
		}
		return r
	}
	shown := s.settle(nil, area)
	for _, k := range keys {
		s.xdotool("key", k)
		shown = s.settle(shown, area)
	}
	menus := s.waitMenus(want)
	s.screenshot(name)
	s.xdotool("key", "Escape", "Escape")
	return menus
}

// waitMenus polls, up to 20 s, until the menus on screen (see
// menusShown) are as wanted, and returns the last ones seen: the caller
// says what is wrong if they are not. A menu's window can be mapped
// before it has its full height, so the height is polled too.
func (s *traySession) waitMenus(want func([]rect) bool) []rect {
	s.t.Helper()
	var menus []rect
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if menus = s.menusShown(); want(menus) {
			return menus
		}
	}
	return menus
}

// menusShown are the tray menus on screen, leftmost first. The Status
// Tray plugin runs in the panel's plugin wrapper, whose windows are the
// icon (at the top of the screen, in the panel), the menus below it and a
// few off-screen helpers.
func (s *traySession) menusShown() []rect {
	var menus []rect
	for _, r := range s.windows("wrapper-2.0") {
		if r.X >= 0 && r.Y > 0 {
			menus = append(menus, r)
		}
	}
	slices.SortFunc(menus, func(a, b rect) int { return a.X - b.X })
	return menus
}

// rect is a window's place on the screen.
type rect struct{ X, Y, W, H int }

// windows are the visible windows of an X class, largest first.
func (s *traySession) windows(class string) []rect {
	out, _ := s.xdotool("search", "--onlyvisible", "--class", class)
	var rs []rect
	for _, w := range strings.Fields(out) {
		geo, _ := s.xdotool("getwindowgeometry", "--shell", w)
		var r rect
		for _, l := range strings.Split(geo, "\n") {
			k, v, _ := strings.Cut(l, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "X":
				r.X = n
			case "Y":
				r.Y = n
			case "WIDTH":
				r.W = n
			case "HEIGHT":
				r.H = n
			}
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b rect) int { return b.W*b.H - a.W*a.H })
	return rs
}
