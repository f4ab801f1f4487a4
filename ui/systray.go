package ui

import (
	"fmt"
	"slices"
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

	mu     sync.Mutex // guards slots' items (read by the click goroutines)
	slots  []*menuSlot
	choose func(menuItem)
}

// menuSlot is one line of the menu on the bus and the item it shows now.
// Lines keep their D-Bus ids across SetMenu calls of the same shape:
// hosts built on libdbusmenu-gtk drop the children of a submenu that
// arrives with them, and lose track of a menu renumbered under them.
type menuSlot struct {
	mi   *systray.MenuItem // nil for a separator
	it   menuItem
	kids []*menuSlot
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

// SetMenu updates the lines in place when the menu has the shape it had
// (menuModel keeps it), and builds it anew only when the shape changed.
func (sn *statusNotifier) SetMenu(items []menuItem, choose func(menuItem)) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.choose = choose
	if !sameShape(sn.slots, items) {
		systray.ResetMenu()
		sn.slots = nil
		for _, it := range items {
			sn.slots = append(sn.slots, sn.newSlot(it, nil))
		}
		// systray announces a new line only with the next change, so
		// the last lines (Quit) would stay unseen by the host: Show
		// announces the menu as it is.
		for _, sl := range slices.Backward(sn.slots) {
			if sl.mi != nil && !sl.it.Hidden {
				sl.mi.Show()
				break
			}
		}
		return
	}
	for i, it := range items {
		sn.update(sn.slots[i], it)
	}
}

// sameShape: as many lines, separators at the same places, submenus on
// the same lines.
func sameShape(slots []*menuSlot, items []menuItem) bool {
	if len(slots) != len(items) {
		return false
	}
	for i, it := range items {
		if it.Separator != (slots[i].mi == nil) || (it.Children != nil) != (slots[i].it.Children != nil) {
			return false
		}
	}
	return true
}

// newSlot adds a line at the end of parent (nil: the menu).
func (sn *statusNotifier) newSlot(it menuItem, parent *systray.MenuItem) *menuSlot {
	sl := &menuSlot{it: it}
	if it.Separator {
		if parent != nil {
			parent.AddSeparator()
		} else {
			systray.AddSeparator()
		}
		return sl
	}
	if parent != nil {
		sl.mi = parent.AddSubMenuItem(it.Label, "")
	} else {
		sl.mi = systray.AddMenuItem(it.Label, "")
	}
	if it.Disabled {
		sl.mi.Disable()
	}
	if it.Hidden {
		sl.mi.Hide()
	}
	for _, c := range it.Children {
		sl.kids = append(sl.kids, sn.newSlot(c, sl.mi))
	}
	// ResetMenu closes ClickedCh of the top-level lines, which ends this
	// goroutine; a submenu line's lives as long as the icon.
	go func() {
		for range sl.mi.ClickedCh {
			sn.mu.Lock()
			it, choose := sl.it, sn.choose
			sn.mu.Unlock()
			if it.Action != actNone && !it.Hidden {
				choose(it)
			}
		}
	}()
	return sl
}

// update makes a line show it, touching the bus only for what changed.
// Children beyond the lines the submenu has get new lines; lines beyond
// the children are hidden, kept for later.
func (sn *statusNotifier) update(sl *menuSlot, it menuItem) {
	old := sl.it
	sl.it = it
	if sl.mi == nil {
		return
	}
	if it.Label != old.Label {
		sl.mi.SetTitle(it.Label)
	}
	if it.Disabled != old.Disabled {
		if it.Disabled {
			sl.mi.Disable()
		} else {
			sl.mi.Enable()
		}
	}
	grew := false
	for i, c := range it.Children {
		if i < len(sl.kids) {
			sn.update(sl.kids[i], c)
		} else {
			sl.kids = append(sl.kids, sn.newSlot(c, sl.mi))
			grew = true
		}
	}
	for _, k := range sl.kids[len(it.Children):] {
		sn.update(k, menuItem{Label: k.it.Label, Hidden: true})
	}
	// Show also announces new children (see SetMenu).
	switch {
	case it.Hidden && !old.Hidden:
		sl.mi.Hide()
	case !it.Hidden && (old.Hidden || grew):
		sl.mi.Show()
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
