// Package pairwin is the tray's "Pair a phone" window: it asks a Pairer
// for a one-time pairing code and shows it as a QR code and a link, with
// the code's countdown, "Copy link", "New code" and, when the LAN is off
// and the Pairer can switch it, "Turn on the LAN".
//
// Guaranteed: the Pairer is called only off the UI goroutine (Host.Spawn)
// and its answers are shown on it (Host.Do); only the answer to the
// latest request is shown, and none lands in a closed window; an expired
// code fades and says so; the QR code is drawn dark on light whatever the
// theme, with its quiet zone, or not at all (a malformed one is refused
// with a sentence).
//
// Not guaranteed: that the code still works when the phone opens it (the
// server spends and expires codes; the window only counts down), nor that
// the phone can reach this computer. The window decides nothing: it
// shows what the Pairer answers. It imports nothing of ui or app/.
package pairwin

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Host is what the window needs of the tray that opens it.
type Host interface {
	App() fyne.App
	Now() time.Time
	// AfterFunc calls f after d on its own goroutine unless stopped first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Do runs f on the UI goroutine, unless the tray has stopped by then.
	Do(f func())
	// Spawn runs blocking work off the UI goroutine.
	Spawn(f func())
	// Context bounds the calls into Corral.
	Context() context.Context
}

// Pairer is a Control that can pair a phone over the LAN. The tray
// offers "Pair a phone…" only when its Control is one; it is a separate
// interface so that a Control without pairing need not pretend.
type Pairer interface {
	// Pair makes a fresh one-time pairing code. When pairing is not
	// possible (the LAN listener is off) the error is a sentence for the
	// owner saying what to change.
	Pair(ctx context.Context) (Code, error)
}

// ErrLANOff is what Pair's error matches (errors.Is) when a code cannot
// be made because the LAN is off: a Pairer that is also a LANSwitch is
// then offered Turn on the LAN in the pairing window.
var ErrLANOff = errors.New("the LAN is off")

// LANSwitch is a Pairer that can turn the LAN on while Corral runs
// (the dashboard's settings.set does the same), so pairing needs no
// restart and no edit of a file.
type LANSwitch interface {
	TurnOnLAN(ctx context.Context) error
}

// Code is one pairing code as the tray shows it.
type Code struct {
	URL     string    // what the phone opens, the code included
	QR      []string  // the QR code of URL: one string per row, '1' dark, '0' light, no quiet zone
	Expires time.Time // the code is refused from then on
	// Fingerprint is the SHA-256 of the LAN certificate, for the owner to
	// compare with what the phone's browser shows ("" when unknown).
	Fingerprint string
}

const (
	// qrQuiet is the light margin around a QR code, in modules, that
	// scanners need.
	qrQuiet = 4
	// qrDot is how many pixels wide each module is in the drawn image;
	// the image is shown scaled nearest-neighbour, so it stays crisp.
	qrDot = 8
	// qrShown is the side of the code on screen.
	qrShown = 264
	// pairWidth is the pairing window's width.
	pairWidth = 440
)

// Labels of the pairing window that tests look for.
const (
	pairTitle     = "Corral — pair a phone"
	labelNewCode  = "New code"
	labelCopyLink = "Copy link"
	labelLANOn    = "Turn on the LAN"
	labelCopied   = "Copied"
)

var errBadQR = errors.New("Corral answered a QR code the tray cannot draw; open the link on the phone instead.")

// qrImage draws QR rows ('1' dark, '0' light) black on white with a
// quiet zone of qrQuiet modules, dot pixels per module.
func qrImage(rows []string, dot int) (*image.Gray, error) {
	n := len(rows)
	if n == 0 || dot < 1 {
		return nil, errBadQR
	}
	side := (n + 2*qrQuiet) * dot
	img := image.NewGray(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for y, row := range rows {
		if len(row) != n {
			return nil, errBadQR
		}
		for x := range n {
			switch row[x] {
			case '0':
				continue
			case '1':
			default:
				return nil, errBadQR
			}
			x0, y0 := (x+qrQuiet)*dot, (y+qrQuiet)*dot
			for yy := y0; yy < y0+dot; yy++ {
				line := img.Pix[yy*img.Stride:]
				for xx := x0; xx < x0+dot; xx++ {
					line[xx] = 0
				}
			}
		}
	}
	return img, nil
}

// pairCountdown is the line under the code: how long it still works.
func pairCountdown(left time.Duration) string {
	left = left.Round(time.Second)
	if left <= 0 {
		return "This code has expired. Choose “" + labelNewCode + "” for another."
	}
	return fmt.Sprintf("The code works for %d:%02d more, once.", int(left.Minutes()), int(left.Seconds())%60)
}

// Window shows a pairing code as a QR code and as a link, with its
// countdown, and asks the Pairer for a new one on request. It exists
// while it is open; closing it forgets the code (which still works on
// the server until it expires or is spent). Its methods run on the UI
// goroutine.
type Window struct {
	h         Host
	pairer    Pairer
	onClosed  func()
	win       fyne.Window
	qr        *canvas.Image
	link      *widget.Label
	fp        *widget.Label // the certificate's fingerprint
	copy      *widget.Button
	again     *widget.Button
	lanOn     *widget.Button // shown when the LAN is off and can be turned on
	countdown *widget.Label
	status    *widget.Label

	code     Code // the code on screen; zero while there is none
	gen      int  // the request whose answer counts; older answers are dropped
	stopTick func() bool
	open     bool
}

// New makes the window, not yet shown; onClosed runs (on the UI
// goroutine) once the owner closes it.
func New(h Host, p Pairer, onClosed func()) *Window {
	w := &Window{h: h, pairer: p, onClosed: onClosed, win: h.App().NewWindow(pairTitle)}
	w.qr = canvas.NewImageFromImage(nil)
	w.qr.FillMode = canvas.ImageFillContain
	w.qr.ScaleMode = canvas.ImageScalePixels
	w.qr.SetMinSize(fyne.NewSize(qrShown, qrShown))
	// The code is drawn on white whatever the theme: scanners want dark
	// modules on a light ground.
	ground := canvas.NewRectangle(color.White)
	w.link = widget.NewLabel("")
	w.link.Selectable = true
	w.link.Wrapping = fyne.TextWrapBreak
	w.link.TextStyle.Monospace = true
	w.fp = widget.NewLabel("")
	w.fp.Wrapping = fyne.TextWrapBreak
	w.copy = widget.NewButton(labelCopyLink, w.copyLink)
	w.again = widget.NewButton(labelNewCode, w.ask)
	w.lanOn = widget.NewButton(labelLANOn, w.turnOnLAN)
	w.lanOn.Importance = widget.HighImportance
	w.lanOn.Hide()
	w.countdown = widget.NewLabel("")
	w.countdown.Wrapping = fyne.TextWrapWord
	w.status = widget.NewLabel("")
	w.status.Wrapping = fyne.TextWrapWord
	w.status.Hide()
	how := widget.NewLabel("Scan the code with the phone’s camera, or open the link on the phone. " +
		"The phone must be on the same network as this computer; it asks for a name and is paired.")
	how.Wrapping = fyne.TextWrapWord
	w.win.SetContent(container.NewPadded(container.NewVBox(
		widget.NewLabelWithStyle("Pair a phone", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		how,
		container.NewCenter(container.NewStack(ground, w.qr)),
		w.link,
		w.fp,
		w.countdown,
		w.status,
		container.NewHBox(w.lanOn, w.copy, w.again),
	)))
	w.win.Resize(fyne.NewSize(pairWidth, 10))
	w.win.SetOnClosed(w.closed)
	w.setCode(Code{})
	return w
}

// Show brings the window up with a fresh code.
func (w *Window) Show() {
	w.open = true
	w.win.Show()
	w.ask()
}

// ask requests a new code off the UI goroutine; only the answer to the
// latest request is shown.
func (w *Window) ask() {
	w.gen++
	gen := w.gen
	w.again.Disable()
	p := w.pairer
	w.h.Spawn(func() {
		code, err := p.Pair(w.h.Context())
		w.h.Do(func() { w.answer(gen, code, err) })
	})
}

func (w *Window) answer(gen int, code Code, err error) {
	if !w.open || gen != w.gen {
		return
	}
	w.again.Enable()
	w.status.Hide()
	_, canSwitch := w.pairer.(LANSwitch)
	if err != nil && canSwitch && errors.Is(err, ErrLANOff) {
		w.lanOn.Enable()
		w.lanOn.Show()
	} else {
		w.lanOn.Hide()
	}
	if err != nil {
		w.setCode(Code{})
		w.status.SetText(err.Error())
		w.status.Show()
		w.fit()
		return
	}
	w.setCode(code)
	w.fit()
}

// turnOnLAN turns the LAN on off the UI goroutine, then asks for a code.
func (w *Window) turnOnLAN() {
	sw, ok := w.pairer.(LANSwitch)
	if !ok {
		return
	}
	w.lanOn.Disable()
	w.gen++
	gen := w.gen
	w.h.Spawn(func() {
		err := sw.TurnOnLAN(w.h.Context())
		w.h.Do(func() {
			if !w.open || gen != w.gen {
				return
			}
			if err != nil {
				w.lanOn.Enable()
				w.status.SetText(err.Error())
				w.status.Show()
				w.fit()
				return
			}
			w.lanOn.Hide()
			w.ask()
		})
	})
}

// setCode puts code on screen; the zero code hides the code's parts.
func (w *Window) setCode(code Code) {
	w.code = code
	if w.stopTick != nil {
		w.stopTick()
		w.stopTick = nil
	}
	w.copy.SetText(labelCopyLink)
	if code.URL == "" {
		w.qr.Image = nil
		w.qr.Hide()
		w.link.SetText("")
		w.link.Hide()
		w.fp.Hide()
		w.copy.Hide()
		w.countdown.Hide()
		return
	}
	img, err := qrImage(code.QR, qrDot)
	if err != nil {
		w.qr.Image = nil
		w.qr.Hide()
		w.status.SetText(err.Error())
		w.status.Show()
	} else {
		w.qr.Image = img
		w.qr.Translucency = 0
		w.qr.Show()
		w.qr.Refresh()
	}
	w.link.SetText(code.URL)
	w.link.Show()
	if code.Fingerprint != "" {
		w.fp.SetText("The phone’s browser warns about the certificate the first time: check that its SHA-256 fingerprint is " + code.Fingerprint)
		w.fp.Show()
	} else {
		w.fp.Hide()
	}
	w.copy.Show()
	w.countdown.Show()
	w.tick()
}

// tick updates the countdown once a second until the code expires; an
// expired code fades so that nobody scans it.
func (w *Window) tick() {
	left := w.code.Expires.Sub(w.h.Now())
	w.countdown.SetText(pairCountdown(left))
	if left <= 0 {
		w.qr.Translucency = 0.85
		w.qr.Refresh()
		w.stopTick = nil
		return
	}
	w.stopTick = w.h.AfterFunc(time.Second, func() {
		w.h.Do(func() {
			if w.open && w.code.URL != "" {
				w.tick()
			}
		})
	})
}

func (w *Window) copyLink() {
	if w.code.URL == "" {
		return
	}
	w.h.App().Clipboard().SetContent(w.code.URL)
	w.copy.SetText(labelCopied)
}

// fit sizes the window to what it shows.
func (w *Window) fit() {
	w.win.Content().Refresh()
	w.win.Resize(fyne.NewSize(pairWidth, w.win.Content().MinSize().Height))
}

func (w *Window) closed() {
	w.open = false
	if w.stopTick != nil {
		w.stopTick()
		w.stopTick = nil
	}
	if w.onClosed != nil {
		w.onClosed()
	}
}

// Open reports whether the window is on screen.
func (w *Window) Open() bool { return w.open }

// Focus brings the open window to the front as it is.
func (w *Window) Focus() { w.win.RequestFocus() }
