package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Settings is the summary of the configuration the Settings window shows.
type Settings struct {
	ConfigPath string
	Values     []Setting // in display order
}

// Setting is one named value, e.g. {"Listen", "127.0.0.1:8765"}.
type Setting struct{ Name, Value string }

// Autostart turns the XDG autostart entry on and off.
type Autostart interface {
	Enabled() bool
	SetEnabled(on bool) error
}

// Labels of the Settings window that tests look for.
const (
	labelOpenConfig     = "Open config file"
	labelChangeSettings = "Change settings…"
	labelAutostart      = "Start Corral when I log in"
)

// settingsWindow shows the config file path, the values in effect (the
// dashboard's Settings page shows the same), a button that opens that
// page to change them, one that opens the file, and the autostart toggle.
type settingsWindow struct {
	t         *Tray
	win       fyne.Window
	form      *widget.Form
	path      *widget.Label
	open      *widget.Button
	change    *widget.Button // opens the dashboard's Settings page
	autostart *widget.Check
	status    *widget.Label
}

func newSettingsWindow(t *Tray) *settingsWindow {
	w := &settingsWindow{t: t, win: t.app.NewWindow("Corral — settings")}
	w.path = widget.NewLabel("")
	w.path.Wrapping = fyne.TextWrapBreak
	w.path.TextStyle.Monospace = true
	w.open = widget.NewButton(labelOpenConfig, w.openConfig)
	w.change = widget.NewButton(labelChangeSettings, func() { t.openLoginAt("settings") })
	w.change.Importance = widget.HighImportance
	w.form = widget.NewForm()
	w.status = widget.NewLabel("")
	w.status.Wrapping = fyne.TextWrapWord
	w.status.Hide()
	w.autostart = widget.NewCheck(labelAutostart, nil)
	note := widget.NewLabel("Change these on the dashboard's Settings page: most take effect at once, and it says which wait for a restart. Corral also picks up edits of the file by itself.")
	note.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(
		widget.NewLabelWithStyle("Config file", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		w.path, container.NewHBox(w.change, w.open), note,
	)
	if t.cfg.Autostart != nil {
		top.Add(w.autostart)
	}
	top.Add(w.status)
	top.Add(widget.NewSeparator())
	w.win.SetContent(container.NewBorder(top, nil, nil, nil, container.NewVScroll(w.form)))
	w.win.Resize(fyne.NewSize(700, 640)) // wide enough that a value such as http://127.0.0.1:8765 stays on one line beside the longest name
	return w
}

// load fills the window from the current settings.
func (w *settingsWindow) load(s Settings) {
	w.path.SetText(s.ConfigPath)
	w.form.Items = nil
	for _, v := range s.Values {
		val := widget.NewLabel(v.Value)
		val.Wrapping = fyne.TextWrapBreak
		w.form.Append(v.Name, val)
	}
	w.form.Refresh()
	if w.t.cfg.Autostart != nil {
		w.showAutostart()
	}
}

// showAutostart sets the toggle to the entry's state without acting on
// the change.
func (w *settingsWindow) showAutostart() {
	w.autostart.OnChanged = nil
	w.autostart.SetChecked(w.t.cfg.Autostart.Enabled())
	w.autostart.OnChanged = w.toggleAutostart
}

func (w *settingsWindow) openConfig() {
	if w.path.Text == "" {
		w.status.SetText("There is no config file to open.")
		w.status.Show()
		return
	}
	w.t.open(w.path.Text)
}

func (w *settingsWindow) toggleAutostart(on bool) {
	w.status.Show()
	if err := w.t.cfg.Autostart.SetEnabled(on); err != nil {
		w.status.SetText("Could not change autostart: " + err.Error())
		w.showAutostart()
		return
	}
	if on {
		w.status.SetText("Corral will start when you log in.")
	} else {
		w.status.SetText("Corral will no longer start when you log in.")
	}
}

func (w *settingsWindow) show() {
	w.load(w.t.cfg.Control.Settings())
	w.win.Show()
}
