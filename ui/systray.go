package ui

import (
	"fmt"
	"sync"

	"fyne.io/systray"
)

// trayIcon is the system tray icon with its menu. The tray renders its
// state through it; tests record what it was told.
type trayIcon interface {
	// SetMenu replaces the menu; choose is called, from any goroutine,
	// with the item the owner picks.
	SetMenu(items []menuItem, choose func(menuItem))
	SetBadge(b badge)
	SetTooltip(s string)
	// Close takes the icon off the tray.
	Close()
}

// statusNotifier is the tray icon as a StatusNotifierItem with a
// com.canonical.dbusmenu menu on the session bus, through fyne.io/systray
// (the library behind Fyne's own tray).
//
// It drives systray directly instead of through Fyne's
// desktop.App.SetSystemTrayMenu, for two reasons: Fyne creates a hidden
// OpenGL window to watch the tray, which costs about 70 MB of resident
// memory under a software renderer while nothing is on screen; and Fyne
// stops the systray at quit without knowing whether it ever connected,
// which dereferences a nil D-Bus connection when it did not. Here the
// icon starts only after Detect found a bus and a tray host, and Close
// recovers from the library if it fails anyway.
type statusNotifier struct {
	icons map[badge][]byte
	end   func()
	once  sync.Once
	log   func(msg string, args ...any)
}

// newStatusNotifier puts the icon on the tray. Call it on the UI
// goroutine once; the bus must be there (Detect).
func newStatusNotifier(title string, icons map[badge][]byte, logf func(string, ...any)) (sn *statusNotifier, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("tray icon: %v", v)
		}
	}()
	start, end := systray.RunWithExternalLoop(nil, nil)
	sn = &statusNotifier{icons: icons, end: end, log: logf}
	systray.SetTitle(title) // some hosts misbehave without a title
	systray.SetIcon(icons[badgeNone])
	start()
	return sn, nil
}

func (sn *statusNotifier) SetMenu(items []menuItem, choose func(menuItem)) {
	systray.ResetMenu()
	sn.add(items, nil, choose)
}

func (sn *statusNotifier) add(items []menuItem, parent *systray.MenuItem, choose func(menuItem)) {
	for _, it := range items {
		if it.Separator {
			if parent != nil {
				parent.AddSeparator()
			} else {
				systray.AddSeparator()
			}
			continue
		}
		var mi *systray.MenuItem
		if parent != nil {
			mi = parent.AddSubMenuItem(it.Label, "")
		} else {
			mi = systray.AddMenuItem(it.Label, "")
		}
		if it.Disabled {
			mi.Disable()
		}
		sn.add(it.Children, mi, choose)
		// ResetMenu closes ClickedCh, which ends this goroutine.
		go func() {
			for range mi.ClickedCh {
				if it.Action != actNone {
					choose(it)
				}
			}
		}()
	}
}

func (sn *statusNotifier) SetBadge(b badge) { systray.SetIcon(sn.icons[b]) }

func (sn *statusNotifier) SetTooltip(s string) { systray.SetTooltip(s) }

func (sn *statusNotifier) Close() {
	sn.once.Do(func() {
		defer func() {
			if v := recover(); v != nil {
				sn.log("tray icon did not stop cleanly", "err", fmt.Sprint(v))
			}
		}()
		sn.end()
	})
}
