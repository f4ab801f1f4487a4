package ui

import (
	"fmt"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"corral/core/policy"
	"corral/core/visible"
	"corral/core/words"
)

// dialogTitle is the approval window's title (the smoke test finds the
// window by it).
const dialogTitle = "Corral — approval needed"

// dialogWidth is the approval window's width; its height follows the
// content up to dialogMaxHeight (less than the smallest usual screen,
// 768 pixels less panels). What the request shows (who, target, why)
// scrolls inside; the question, the countdown and the buttons stay
// visible whatever an agent sends.
const (
	dialogWidth     = 620
	dialogMaxHeight = 600
)

// approvalDialog is the one window that shows pending approvals, the
// current one of the queue at a time. It renders a prompt; the decisions
// about buttons, guard and answers are the prompt's. The window is made
// for the first approval and hidden, never closed, when none is pending:
// Fyne 2.7.1 crashes its loop when a pointer event reaches a window it is
// closing (processMouseMoved calls into the nil view of a closing
// window), and a dialog that goes away under the owner's pointer — an
// answer in the dialog itself, or from the browser or the phone — is
// exactly that.
type approvalDialog struct {
	t   *Tray
	win fyne.Window
	p   prompt
	// answering is set between a button press and the broker's answer,
	// so a double click cannot send two answers.
	answering bool

	position  *widget.Label
	title     *widget.Label
	who       *widget.Label
	target    *widget.Label
	access    *widget.Label
	why       *widget.Label
	careful   *widget.Label // secrets: shown only then
	preview   *widget.Label // what a write does: shown only then
	countdown *widget.Label
	bar       *countdownBar
	widen     *widget.Check
	expiry    *widget.Select
	reason    *widget.Entry // the owner's sentence with a denial; Enter denies once
	options   *fyne.Container
	status    *widget.Label
	buttons   map[policy.Decision]*widget.Button
	prev      *widget.Button // previous/next waiting approval: shown when several wait
	next      *widget.Button
	form      *fyne.Container // label and value rows (a widget.Form keeps a hidden row's label)
	rowLabels []*widget.Label
	scroll    *container.Scroll // holds form

	stopGuard, stopTick func() bool
	visible             bool
}

func newApprovalDialog(t *Tray) *approvalDialog {
	d := &approvalDialog{t: t, win: t.app.NewWindow(dialogTitle), buttons: map[policy.Decision]*widget.Button{}}
	wrap := func(l *widget.Label) *widget.Label { l.Wrapping = fyne.TextWrapWord; return l }
	d.position = widget.NewLabelWithStyle("", fyne.TextAlignTrailing, fyne.TextStyle{Italic: true})
	d.title = wrap(widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	d.who = wrap(widget.NewLabel(""))
	d.target = widget.NewLabel("")
	d.target.Wrapping = fyne.TextWrapBreak
	d.target.TextStyle.Monospace = true
	d.access = widget.NewLabel("")
	d.why = wrap(widget.NewLabel(""))
	d.careful = wrap(widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	d.careful.Importance = widget.DangerImportance
	d.preview = widget.NewLabel("")
	d.preview.Wrapping = fyne.TextWrapBreak
	d.preview.TextStyle.Monospace = true
	d.countdown = wrap(widget.NewLabel(""))
	d.bar = newCountdownBar()
	d.widen = widget.NewCheck("", nil)
	d.expiry = widget.NewSelect(expiryLabels(), nil)
	d.expiry.SetSelected(expiries[defaultExpiry].Label)
	d.status = wrap(widget.NewLabel(""))
	d.status.Importance = widget.DangerImportance
	d.status.Hide()
	d.reason = widget.NewEntry()
	d.reason.SetPlaceHolder(reasonHint)
	d.reason.OnChanged = func(s string) {
		if r := []rune(s); len(r) > policy.MaxAnswerReason {
			d.reason.SetText(string(r[:policy.MaxAnswerReason]))
		}
	}
	d.reason.OnSubmitted = func(string) { d.press(policy.DenyOnce) }

	// One row of allow buttons, one of deny buttons, all of the same
	// weight; only the default answer (render) stands out.
	var allow, deny []fyne.CanvasObject
	for _, c := range policy.AllChoices() {
		b := widget.NewButton(c.Label, func() { d.press(c.Decision) })
		d.buttons[c.Decision] = b
		if c.Allows {
			allow = append(allow, b)
		} else {
			deny = append(deny, b)
		}
	}
	for len(deny) < len(allow) {
		deny = append(deny, layout.NewSpacer())
	}
	d.prev = widget.NewButton("‹ Previous", func() { d.step(-1) })
	d.next = widget.NewButton("Next ›", func() { d.step(1) })
	d.form = container.New(layout.NewFormLayout())
	for _, row := range []struct {
		label string
		value *widget.Label
	}{{"Careful", d.careful}, {"Who", d.who}, {"Wants to", d.access}, {"Target", d.target}, {"Why", d.why}, {"Writes", d.preview}} {
		l := widget.NewLabelWithStyle(row.label, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
		d.rowLabels = append(d.rowLabels, l)
		d.form.Add(l)
		d.form.Add(row.value)
	}
	d.scroll = container.NewVScroll(d.form)
	d.options = container.NewVBox(d.widen, container.NewHBox(widget.NewLabel(words.AlwaysLasts), d.expiry))
	d.win.SetContent(container.NewPadded(container.NewBorder(
		container.NewBorder(nil, nil, nil, container.NewHBox(d.prev, d.position, d.next), d.title),
		container.NewVBox(
			d.countdown, d.bar.box,
			widget.NewSeparator(),
			d.options,
			container.NewGridWithColumns(len(allow), allow...),
			d.reason,
			container.NewGridWithColumns(len(deny), deny...),
			d.status,
		),
		nil, nil,
		d.scroll,
	)))
	d.win.Resize(fyne.NewSize(dialogWidth, 10))
	d.win.SetFixedSize(true)
	d.win.CenterOnScreen()
	// Closing the window is "decide later": the request stays pending (the
	// tray menu, the browser and the phone can still answer it) and the
	// broker denies it at the timeout.
	d.win.SetCloseIntercept(t.dismissDialog)
	return d
}

// sync makes the window show the queue's current approval. A different
// approval restarts the guard.
func (d *approvalDialog) sync() {
	a, ok := d.t.queue.shown()
	if !ok {
		return
	}
	d.position.SetText(d.t.queue.position())
	several := d.t.queue.len() > 1
	if several != d.prev.Visible() {
		if several {
			d.prev.Show()
			d.next.Show()
		} else {
			d.prev.Hide()
			d.next.Hide()
		}
		if a.ID == d.p.a.ID && d.visible {
			d.fit() // the header's height and the title's width changed
		}
	}
	if a.ID == d.p.a.ID && d.visible {
		return
	}
	d.render(a)
	if !d.visible {
		d.visible = true
		d.t.raise(d.win)
		d.win.CenterOnScreen()
	}
}

// step shows the previous (-1) or next (+1) waiting approval.
func (d *approvalDialog) step(delta int) {
	if d.t.queue.step(delta) {
		d.sync()
	}
}

// render puts a on screen with its buttons held back for GuardDelay.
func (d *approvalDialog) render(a policy.Approval) {
	now := d.t.now()
	d.p = prompt{a: a, shown: now}
	d.answering = false
	d.title.SetText(visible.Cut(d.p.title(), 300))
	d.who.SetText(d.p.who())
	d.access.SetText(d.p.access())
	d.target.SetText(d.p.target())
	d.why.SetText(d.p.why())
	d.showItem(0, d.careful, d.p.careful())
	d.showItem(5, d.preview, visible.Cut(visible.Text(a.Preview), 600))
	// Allow and deny weigh the same; the default answer (Deny for
	// secrets) is the one marked and focused once the guard has passed.
	for dec, b := range d.buttons {
		b.Importance = widget.MediumImportance
		if dec == a.Default() {
			b.Importance = widget.HighImportance
		}
	}
	d.status.SetText("")
	d.status.Hide()

	for _, b := range d.buttons {
		b.Hide()
	}
	for _, c := range d.p.choices() {
		b := d.buttons[c.Decision]
		b.SetText(c.Label)
		b.Show()
	}
	if d.p.remembers() {
		d.options.Show()
	} else {
		d.options.Hide()
	}
	d.widen.SetChecked(false)
	if d.p.canWiden() {
		d.widen.SetText(words.FolderWide + " " + d.p.folder())
		d.widen.Show()
	} else {
		d.widen.Hide()
	}
	d.expiry.SetSelected(expiries[defaultExpiry].Label)
	d.reason.SetText("")

	d.setButtons(false)
	if d.stopGuard != nil {
		d.stopGuard()
	}
	id := a.ID
	d.stopGuard = d.t.afterFunc(GuardDelay, func() {
		d.t.do(func() {
			if d.visible && d.p.a.ID == id && !d.answering {
				d.setButtons(true)
				d.win.Canvas().Focus(d.buttons[a.Default()])
			}
		})
	})
	d.tick()
	d.win.Content().Refresh()
	d.fit()
}

// showItem shows row i with text, or hides the row when text is "".
func (d *approvalDialog) showItem(i int, l *widget.Label, text string) {
	l.SetText(text)
	if text == "" {
		l.Hide()
		d.rowLabels[i].Hide()
	} else {
		l.Show()
		d.rowLabels[i].Show()
	}
	d.form.Refresh()
}

// fit sizes the window to what this approval shows (fixed-size windows
// do not shrink by themselves), at most dialogMaxHeight: beyond that the
// request's details scroll and the rest stays in view.
func (d *approvalDialog) fit() {
	// Lay the form out at the window's width first: wrapped labels know
	// their height only once they know their width.
	d.win.Resize(fyne.NewSize(dialogWidth, dialogMaxHeight))
	d.form.Resize(fyne.NewSize(d.scroll.Size().Width, d.form.MinSize().Height))
	others := d.win.Content().MinSize().Height - d.scroll.MinSize().Height
	if d.win.Padded() { // the window's own padding, outside its content
		others += 2 * theme.Size(theme.SizeNamePadding)
	}
	d.win.Resize(fyne.NewSize(dialogWidth, min(others+d.form.MinSize().Height, dialogMaxHeight)))
	d.scroll.ScrollToTop()
}

// tick updates the countdown once a second while the window is up.
func (d *approvalDialog) tick() {
	if d.stopTick != nil {
		d.stopTick()
	}
	now := d.t.now()
	d.countdown.SetText(d.p.countdown(now))
	d.bar.SetValue(d.p.progress(now))
	d.bar.SetLow(d.p.remaining(now) < words.CountdownLow)
	d.stopTick = d.t.afterFunc(time.Second, func() {
		d.t.do(func() {
			if d.visible {
				d.tick()
			}
		})
	})
}

func (d *approvalDialog) setButtons(on bool) {
	for _, b := range d.buttons {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

// press answers the shown approval. Input inside the guard is ignored.
func (d *approvalDialog) press(dec policy.Decision) {
	if d.answering || !d.visible {
		return
	}
	ans, err := d.p.answer(d.t.now(), dec, d.widen.Checked, expiryFor(d.expiry.Selected))
	if err != nil {
		return
	}
	d.answering = true
	d.setButtons(false)
	d.t.respond(withReason(ans, d.reason.Text))
}

// failed shows why an answer did not go through and lets the owner try
// again, if that approval is still on screen.
func (d *approvalDialog) failed(id string, err error) {
	if !d.visible || d.p.a.ID != id {
		return
	}
	d.answering = false
	d.status.SetText(err.Error())
	d.status.Show()
	d.setButtons(true)
}

// hide stops the timers and takes the window off the screen; sync shows
// it again.
func (d *approvalDialog) hide() {
	if d.stopGuard != nil {
		d.stopGuard()
	}
	if d.stopTick != nil {
		d.stopTick()
	}
	d.stopGuard, d.stopTick = nil, nil
	d.visible = false
	d.win.Hide()
}

// countdownBar is a thin bar that shrinks as the approval's time runs
// out. (Fyne's ProgressBar is drawn in the primary colour, which belongs
// to the "Allow once" button alone.)
type countdownBar struct {
	box  *fyne.Container
	fill *canvas.Rectangle
	frac float64
}

func newCountdownBar() *countdownBar {
	b := &countdownBar{fill: canvas.NewRectangle(countdownColor(words.CountdownColor)), frac: 1}
	track := canvas.NewRectangle(color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x40})
	b.box = container.New(b, track, b.fill)
	return b
}

// SetLow turns the fill to the web's "little time left" colour.
func (b *countdownBar) SetLow(low bool) {
	c := countdownColor(words.CountdownColor)
	if low {
		c = countdownColor(words.CountdownLowColor)
	}
	if b.fill.FillColor != c {
		b.fill.FillColor = c
		b.fill.Refresh()
	}
}

// countdownColor reads "#rrggbb" (core/words' colours, which the web's
// CSS uses too).
func countdownColor(hex string) color.Color {
	var r, g, bl uint8
	fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &bl)
	return color.NRGBA{R: r, G: g, B: bl, A: 0xff}
}

func (b *countdownBar) SetValue(f float64) {
	if f != b.frac {
		b.frac = f
		b.box.Refresh()
	}
}

// Layout implements fyne.Layout: the track full width, the fill a share.
func (b *countdownBar) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Resize(size)
	objs[1].Resize(fyne.NewSize(size.Width*float32(b.frac), size.Height))
	objs[0].Move(fyne.NewPos(0, 0))
	objs[1].Move(fyne.NewPos(0, 0))
}

func (b *countdownBar) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(40, 4) }
