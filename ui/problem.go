package ui

import (
	"os"
	"path/filepath"
	"strconv"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Problem is why Corral cannot start, told to an owner who started it
// from the desktop and sees no terminal.
type Problem struct {
	Sentence string // what is wrong, a sentence
	File     string // the file to fix; "" when none
	Line     int    // its line; 0 when unknown
}

// ProblemTitle is the title of the window ShowProblem opens.
const ProblemTitle = "Corral cannot start"

// ShowProblem shows p in a window with "Open the folder" (the file's, in
// the desktop's file manager) and "Quit", and returns when the owner
// closes it. d must have a display (Detect).
func ShowProblem(d Desktop, p Problem) {
	env := os.Environ()
	if d.Bus == "" {
		os.Setenv("DBUS_SESSION_BUS_ADDRESS", noBus)
	}
	a := fyneapp.NewWithID(AppID)
	w := a.NewWindow(ProblemTitle)
	sentence := widget.NewLabel(p.Sentence)
	sentence.Wrapping = fyne.TextWrapWord
	rows := []fyne.CanvasObject{widget.NewLabelWithStyle(ProblemTitle, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), sentence}
	var buttons []fyne.CanvasObject
	if p.File != "" {
		where := "The file: " + p.File
		if p.Line > 0 {
			where += ", line " + strconv.Itoa(p.Line)
		}
		file := widget.NewLabel(where)
		file.Wrapping = fyne.TextWrapBreak
		rows = append(rows, file, widget.NewLabel("Correct it and start Corral again."))
		open := xdgOpen(env)
		buttons = append(buttons, widget.NewButton("Open the folder", func() { _ = open(filepath.Dir(p.File)) }))
	}
	buttons = append(buttons, widget.NewButton("Quit", a.Quit))
	rows = append(rows, container.NewHBox(buttons...))
	w.SetContent(container.NewPadded(container.NewVBox(rows...)))
	w.Resize(fyne.NewSize(dialogWidth, 10))
	w.CenterOnScreen()
	w.ShowAndRun()
}
