package ui

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"github.com/go-gl/glfw/v3.3/glfw"
	"github.com/godbus/dbus/v5"
)

// AppID is Corral's application id (FyneApp.toml, the .desktop file).
const AppID = "dev.corral.app"

// Desktop is what the owner's session offers: a display to draw on, a
// session bus, and a StatusNotifier host (the tray) on that bus.
type Desktop struct {
	Display  string // $DISPLAY when an X server answers there; "" otherwise
	Bus      string // the session bus address when one answers; "" otherwise
	TrayHost bool   // a StatusNotifierWatcher is on the bus
	// Notifier: a notification service (org.freedesktop.Notifications)
	// runs on the bus or can be started by it. Without one Corral sends
	// no notifications at all, rather than failing (and logging) once
	// per approval.
	Notifier bool
	// Note is one line for the owner about what is missing, "" when
	// nothing is.
	Note string
}

// probeTimeout bounds each look at the display and the bus.
const probeTimeout = 2 * time.Second

// Detect looks at the session through getenv (os.Getenv): is there an X
// display that answers, a session bus, a tray host on it? It never starts
// anything (godbus alone would run dbus-launch when no bus is set).
func Detect(getenv func(string) string) Desktop {
	var d Desktop
	disp := getenv("DISPLAY")
	switch {
	case disp == "" && getenv("WAYLAND_DISPLAY") != "":
		d.Note = "no X display ($DISPLAY is not set; this build draws through X11 or XWayland); running headless: approvals go to the browser and the phone"
		return d
	case disp == "":
		d.Note = "no display ($DISPLAY is not set); running headless: approvals go to the browser and the phone"
		return d
	}
	if err := probeX(disp); err != nil {
		d.Note = fmt.Sprintf("the display %s does not answer (%v); running headless: approvals go to the browser and the phone", disp, err)
		return d
	}
	d.Display = disp
	addr := busAddress(getenv)
	if addr == "" {
		d.Note = "no D-Bus session bus, so no tray icon and no notifications; approval dialogs still open on " + disp
		return d
	}
	host, notifier, err := probeBus(addr)
	if err != nil {
		d.Note = fmt.Sprintf("the D-Bus session bus does not answer (%v), so no tray icon and no notifications; approval dialogs still open on %s", err, disp)
		return d
	}
	d.Bus, d.TrayHost, d.Notifier = addr, host, notifier
	switch {
	case !host && !notifier:
		d.Note = "no system tray and no notification service on the session bus, so no tray icon and no notifications; approval dialogs still open on " + disp
	case !host:
		d.Note = "no system tray (no StatusNotifier host on the session bus), so no tray icon; approval dialogs still open on " + disp
	case !notifier:
		d.Note = "no notification service (org.freedesktop.Notifications) on the session bus, so no notifications; approval dialogs still open on " + disp
	}
	return d
}

// probeX connects to the X server's socket: ":N", "unix:N", "host:N".
func probeX(disp string) error {
	i := strings.LastIndexByte(disp, ':')
	if i < 0 {
		return fmt.Errorf("malformed $DISPLAY %q", disp)
	}
	host, num := disp[:i], disp[i+1:]
	if j := strings.IndexByte(num, '.'); j >= 0 {
		num = num[:j]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return fmt.Errorf("malformed $DISPLAY %q", disp)
	}
	var c net.Conn
	if host == "" || host == "unix" {
		sock := "/tmp/.X11-unix/X" + strconv.Itoa(n)
		if c, err = net.DialTimeout("unix", sock, probeTimeout); err != nil {
			c, err = net.DialTimeout("unix", "@"+sock, probeTimeout) // abstract socket
		}
	} else {
		c, err = net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)), probeTimeout)
	}
	if err != nil {
		return err
	}
	return c.Close()
}

// busAddress is the session bus address from the environment or the
// usual socket in $XDG_RUNTIME_DIR; "" when there is none.
func busAddress(getenv func(string) string) string {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" && a != noBus {
		return a
	}
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" {
		sock := filepath.Join(dir, "bus")
		if st, err := os.Stat(sock); err == nil && st.Mode().Type() == os.ModeSocket {
			return "unix:path=" + sock
		}
	}
	return ""
}

// notificationsName is the desktop notification service's bus name.
const notificationsName = "org.freedesktop.Notifications"

// probeBus connects to the bus and asks whether a StatusNotifierWatcher
// (the tray host's registry) is there, and whether a notification
// service is there or can be started by the bus.
func probeBus(addr string) (trayHost, notifier bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return false, false, err
	}
	defer conn.Close()
	bus := conn.BusObject()
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&trayHost); err != nil {
		return false, false, err
	}
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, notificationsName).Store(&notifier); err != nil || notifier {
		return trayHost, notifier, err
	}
	var activatable []string
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&activatable); err != nil {
		return trayHost, false, nil // not knowing is no service: better silent than an error per approval
	}
	return trayHost, slices.Contains(activatable, notificationsName), nil
}

// noBus is the session bus address Corral sets for itself when there is no
// bus: godbus (in Fyne and its systray) would otherwise run dbus-launch
// and leave a stray bus daemon behind; with it, every attempt fails fast.
const noBus = "disabled:"

// Run shows the tray and the dialogs on d and blocks until the owner
// chooses Quit or ctx ends. It must be called on the main goroutine (Fyne
// owns it); the caller runs Corral itself on another one.
//
// The tray icon appears only with a session bus and a StatusNotifier host
// on it (see statusNotifier); otherwise only the approval dialog does,
// and without a bus there are no notifications either.
//
// Focus: the approval window is created with GLFW's FocusOnShow off and
// Floating on, so it is mapped above other windows without asking for
// keyboard focus; on X11 the window manager still has the last word (most
// leave focus alone for windows that do not ask for it; a WM with no focus
// stealing prevention may still give it). The 750 ms guard covers the
// rest. Windows opened from the menu (Settings, Recent activity, a chosen
// approval) take focus as usual.
//
// A panic inside Fyne's loop ends Run with an error instead of the
// process; Corral goes on headless.
func Run(ctx context.Context, d Desktop, cfg Config) (err error) {
	if d.Display == "" {
		return fmt.Errorf("no display")
	}
	env := os.Environ()
	if d.Bus == "" {
		os.Setenv("DBUS_SESSION_BUS_ADDRESS", noBus)
	} else {
		os.Setenv("DBUS_SESSION_BUS_ADDRESS", d.Bus)
	}
	if cfg.Open == nil {
		cfg.Open = xdgOpen(env)
	}
	cfg.Notify = d.Bus != "" && d.Notifier

	a := fyneapp.NewWithID(AppID)
	var icon trayIcon
	if d.Bus != "" && d.TrayHost {
		icons := map[badge][]byte{badgeNone: cfg.Icons.Tray, badgePending: cfg.Icons.Pending, badgePaused: cfg.Icons.Paused}
		logf := func(msg string, args ...any) {
			if cfg.Logger != nil {
				cfg.Logger.Warn(msg, args...)
			}
		}
		if sn, err := newStatusNotifier("Corral", icons, logf); err != nil {
			logf("no tray icon; approval dialogs still open", "err", err)
		} else {
			icon = sn
		}
	}
	t := newTray(a, icon, cfg)
	t.raise = raiseWithoutFocus
	t.idle = &idler{}
	defer func() {
		t.Stop()
		if v := recover(); v != nil {
			err = fmt.Errorf("the desktop UI crashed: %v", v)
			if cfg.Logger != nil {
				cfg.Logger.Error("desktop UI crashed", "err", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
		}
	}()
	a.Lifecycle().SetOnStarted(func() { t.Start(ctx) })
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			t.Stop()
			select {
			case <-done:
				return // the loop has ended already: nothing to quit
			default:
			}
			// Should the loop end between that look and this call, fyne.Do
			// runs Quit here, off the main thread, where GLFW panics: the
			// process is ending anyway, so that must not crash it.
			defer func() {
				if v := recover(); v != nil && cfg.Logger != nil {
					cfg.Logger.Warn("desktop UI: quitting after its loop ended", "err", fmt.Sprint(v))
				}
			}()
			fyne.Do(a.Quit)
		case <-done:
		}
	}()
	a.Run()
	return nil
}

// raiseWithoutFocus shows w above other windows without asking for the
// keyboard focus (see Run). The GLFW hints apply to windows created from
// now on, so they are set around the first Show and reset after it.
func raiseWithoutFocus(w fyne.Window) {
	hints := func(focus, floating int) {
		defer func() { _ = recover() }() // go-gl panics on GLFW usage errors: the hints are best effort
		glfw.WindowHint(glfw.FocusOnShow, focus)
		glfw.WindowHint(glfw.Floating, floating)
	}
	hints(glfw.False, glfw.True)
	w.Show()
	hints(glfw.True, glfw.False)
}

// xdgOpen opens a URL or a file with xdg-open, in the environment Corral
// started with, and reaps the process.
func xdgOpen(env []string) func(string) error {
	env = slices.Clone(env)
	return func(target string) error {
		cmd := exec.Command("xdg-open", target)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			return err
		}
		go cmd.Wait()
		return nil
	}
}
