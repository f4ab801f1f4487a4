package pairwin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/ui/internal/shots"
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/boombuler/barcode/qr"
)

// qrRows encodes text as the server does: one string per row, '1' dark.
func qrRows(t *testing.T, text string) []string {
	t.Helper()
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		t.Fatal(err)
	}
	b := code.Bounds()
	var rows []string
	for y := b.Min.Y; y < b.Max.Y; y++ {
		var sb strings.Builder
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := code.At(x, y).RGBA(); r == 0 {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		rows = append(rows, sb.String())
	}
	return rows
}

// fakePairer pairs: each call makes a new code valid five minutes from
// the clock's now, or fails with err.
type fakePairer struct {
	t   *testing.T
	now func() time.Time

	mu    sync.Mutex
	calls int
	err   error
}

const testFP = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"

func (p *fakePairer) Pair(ctx context.Context) (Code, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.err != nil {
		return Code{}, p.err
	}
	u := fmt.Sprintf("http://192.168.1.20:8765/pair?code=code%d", p.calls)
	return Code{URL: u, QR: qrRows(p.t, u), Expires: p.now().Add(5 * time.Minute), Fingerprint: testFP}, nil
}

// fakeHost stands in for the tray: a clock moved by hand whose timers
// fire inside advance, and a UI goroutine whose posted functions wait
// until the test runs them (flush).
type fakeHost struct {
	app    fyne.App
	now    time.Time
	timers []*fakeTimer
	posted []func()
	spawn  func(f func())
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (h *fakeHost) App() fyne.App            { return h.app }
func (h *fakeHost) Now() time.Time           { return h.now }
func (h *fakeHost) Do(f func())              { h.posted = append(h.posted, f) }
func (h *fakeHost) Spawn(f func())           { h.spawn(f) }
func (h *fakeHost) Context() context.Context { return context.Background() }

func (h *fakeHost) AfterFunc(d time.Duration, f func()) func() bool {
	tm := &fakeTimer{at: h.now.Add(d), f: f}
	h.timers = append(h.timers, tm)
	return func() bool { was := !tm.stopped; tm.stopped = true; return was }
}

// flush runs what was posted, including what those functions post.
func (h *fakeHost) flush() {
	for len(h.posted) > 0 {
		f := h.posted[0]
		h.posted = h.posted[1:]
		f()
	}
}

// advance moves the clock on by d, fires the timers that came due, in
// order of their due time, and runs what they posted.
func (h *fakeHost) advance(d time.Duration) {
	h.now = h.now.Add(d)
	var due []*fakeTimer
	for _, tm := range h.timers {
		if !tm.stopped && !tm.at.After(h.now) {
			tm.stopped = true
			due = append(due, tm)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.f()
	}
	h.flush()
}

func newHost(t *testing.T) *fakeHost {
	return &fakeHost{app: test.NewTempApp(t), now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), spawn: func(f func()) { f() }}
}

// newPairer makes codes that expire five minutes from h's now.
func newPairer(t *testing.T, h *fakeHost) *fakePairer {
	return &fakePairer{t: t, now: h.Now}
}

// show opens a pairing window on h with p as its Pairer, as the tray's
// menu item does; closed counts the onClosed calls.
func show(h *fakeHost, p Pairer) (w *Window, closed *int) {
	closed = new(int)
	w = New(h, p, func() { *closed++ })
	w.Show()
	h.flush()
	return w, closed
}

func TestQRImage(t *testing.T) {
	rows := qrRows(t, "http://192.168.1.20:8765/pair?code=abc")
	n := len(rows)
	img, err := qrImage(rows, 3)
	if err != nil {
		t.Fatal(err)
	}
	if side := (n + 2*qrQuiet) * 3; img.Bounds().Dx() != side || img.Bounds().Dy() != side {
		t.Fatalf("image %v for %d modules, want %d px square", img.Bounds(), n, side)
	}
	// Every module is a dot×dot square of its colour, inside a white
	// quiet zone of four modules.
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			mx, my := x/3-qrQuiet, y/3-qrQuiet
			want := uint8(0xff)
			if mx >= 0 && my >= 0 && mx < n && my < n && rows[my][mx] == '1' {
				want = 0
			}
			if got := img.GrayAt(x, y).Y; got != want {
				t.Fatalf("pixel (%d,%d) = %#x, want %#x", x, y, got, want)
			}
		}
	}
	for name, bad := range map[string][]string{
		"empty":  nil,
		"ragged": {"101", "01", "111"},
		"wide":   {"1010", "0101", "1111"},
		"letter": {"101", "0x1", "111"},
	} {
		if _, err := qrImage(bad, 2); err == nil {
			t.Errorf("%s rows drawn without an error", name)
		}
	}
}

func TestPairCountdown(t *testing.T) {
	for _, tt := range []struct {
		left time.Duration
		want string
	}{
		{5 * time.Minute, "The code works for 5:00 more, once."},
		{61*time.Second + 400*time.Millisecond, "The code works for 1:01 more, once."},
		{400 * time.Millisecond, "This code has expired. Choose “New code” for another."},
		{-time.Minute, "This code has expired. Choose “New code” for another."},
	} {
		if got := pairCountdown(tt.left); got != tt.want {
			t.Errorf("pairCountdown(%v) = %q, want %q", tt.left, got, tt.want)
		}
	}
}

func TestPairWindow(t *testing.T) {
	h := newHost(t)
	p := newPairer(t, h)
	w, closed := show(h, p)
	if w.win.Title() != pairTitle || p.calls != 1 {
		t.Fatalf("no pairing window, or %d calls", p.calls)
	}
	const first = "http://192.168.1.20:8765/pair?code=code1"
	if w.link.Text != first || !w.link.Selectable || !w.link.Visible() {
		t.Errorf("link %q selectable %v visible %v", w.link.Text, w.link.Selectable, w.link.Visible())
	}
	if !w.fp.Visible() || !strings.Contains(w.fp.Text, testFP) {
		t.Errorf("fingerprint line %q visible %v", w.fp.Text, w.fp.Visible())
	}
	n := len(qrRows(t, first))
	if w.qr.Image == nil || !w.qr.Visible() {
		t.Fatal("no QR image")
	}
	if side := (n + 2*qrQuiet) * qrDot; w.qr.Image.Bounds().Dx() != side || w.qr.Image.Bounds().Dy() != side {
		t.Errorf("QR image %v, want %d px square for %d modules", w.qr.Image.Bounds(), side, n)
	}
	if ms := w.qr.MinSize(); ms.Width < qrShown || ms.Height < qrShown {
		t.Errorf("QR shown at %v", ms)
	}
	if w.countdown.Text != "The code works for 5:00 more, once." {
		t.Errorf("countdown %q", w.countdown.Text)
	}
	shots.Save(t, "tray-pair", w.win.Canvas().Capture)

	h.advance(61 * time.Second)
	if w.countdown.Text != "The code works for 3:59 more, once." {
		t.Errorf("countdown after 61 s: %q", w.countdown.Text)
	}
	test.Tap(w.copy)
	if got := h.app.Clipboard().Content(); got != first || w.copy.Text != labelCopied {
		t.Errorf("copied %q, button %q", got, w.copy.Text)
	}

	// New code asks again and shows the new one from the start.
	test.Tap(w.again)
	h.flush()
	const second = "http://192.168.1.20:8765/pair?code=code2"
	if p.calls != 2 || w.link.Text != second || w.countdown.Text != "The code works for 5:00 more, once." || w.copy.Text != labelCopyLink {
		t.Errorf("after New code: %d calls, link %q, countdown %q, copy %q", p.calls, w.link.Text, w.countdown.Text, w.copy.Text)
	}

	// An expired code fades and says so; New code stays at hand.
	h.advance(5 * time.Minute)
	if !strings.HasPrefix(w.countdown.Text, "This code has expired.") || w.qr.Translucency < 0.5 || w.again.Disabled() {
		t.Errorf("expired: countdown %q, translucency %v, New code disabled %v", w.countdown.Text, w.qr.Translucency, w.again.Disabled())
	}
	test.Tap(w.again)
	h.flush()
	if w.qr.Translucency != 0 || !strings.HasPrefix(w.countdown.Text, "The code works for 5:00") {
		t.Errorf("fresh code after expiry: translucency %v, countdown %q", w.qr.Translucency, w.countdown.Text)
	}

	if !w.Open() {
		t.Error("the window says it is not open")
	}
	w.win.Close()
	if w.Open() || *closed != 1 {
		t.Errorf("closed: open %v, onClosed ran %d times", w.Open(), *closed)
	}
}

func TestPairWindowUnavailable(t *testing.T) {
	h := newHost(t)
	p := newPairer(t, h)
	const sentence = "Pairing needs the LAN: set lan = true under [server] in the config and restart Corral."
	p.err = errors.New(sentence)
	w, _ := show(h, p)
	if !w.status.Visible() || w.status.Text != sentence {
		t.Errorf("status %v %q", w.status.Visible(), w.status.Text)
	}
	if w.qr.Visible() || w.link.Visible() || w.copy.Visible() || w.countdown.Visible() || w.again.Disabled() {
		t.Errorf("unavailable: qr %v link %v copy %v countdown %v, New code disabled %v",
			w.qr.Visible(), w.link.Visible(), w.copy.Visible(), w.countdown.Visible(), w.again.Disabled())
	}
	// Once the LAN is on, New code works.
	p.err = nil
	test.Tap(w.again)
	h.flush()
	if w.status.Visible() || !w.qr.Visible() || w.link.Text != "http://192.168.1.20:8765/pair?code=code2" {
		t.Errorf("after the LAN came on: status %v %q, qr %v, link %q", w.status.Visible(), w.status.Text, w.qr.Visible(), w.link.Text)
	}
}

// Only the answer to the latest request counts: a slow first answer that
// arrives after New code's does not replace it, and nothing lands in a
// closed window.
func TestPairWindowStaleAnswers(t *testing.T) {
	h := newHost(t)
	p := newPairer(t, h)
	var held []func()
	h.spawn = func(f func()) { held = append(held, f) }
	w, _ := show(h, p)
	if !w.again.Disabled() {
		t.Error("New code enabled while a code is on its way")
	}
	w.ask()
	held[1]() // the second request answers first (the fake hands out code1)…
	h.flush()
	held[0]() // …and the first one's answer (code2) comes late
	h.flush()
	const latest = "http://192.168.1.20:8765/pair?code=code1"
	if w.link.Text != latest || w.again.Disabled() {
		t.Errorf("link %q, want the latest request's %q; New code disabled %v", w.link.Text, latest, w.again.Disabled())
	}
	w.ask()
	w.win.Close()
	held[2]()
	h.flush()
	if w.link.Text != latest {
		t.Errorf("an answer changed a closed window: %q", w.link.Text)
	}
}

// lanPairer is a Pairer that can turn the LAN on, as the app's is.
type lanPairer struct {
	*fakePairer
	turnedOn int
}

func (p *lanPairer) TurnOnLAN(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turnedOn++
	p.err = nil
	return nil
}

type lanOffErr struct{}

func (lanOffErr) Error() string   { return "Pairing needs the LAN, which is off." }
func (lanOffErr) Is(t error) bool { return t == ErrLANOff }

// With the LAN off, the pairing window offers Turn on the LAN; one tap
// turns it on and shows a code. Another error offers nothing of the kind.
func TestPairWindowTurnsLANOn(t *testing.T) {
	h := newHost(t)
	p := newPairer(t, h)
	lp := &lanPairer{fakePairer: p}
	p.err = lanOffErr{}
	w, _ := show(h, lp)
	if !w.lanOn.Visible() || w.qr.Visible() || w.status.Text != "Pairing needs the LAN, which is off." {
		t.Fatalf("LAN off: button %v, qr %v, status %q", w.lanOn.Visible(), w.qr.Visible(), w.status.Text)
	}
	shots.Save(t, "tray-pair-lan-off", w.win.Canvas().Capture)
	test.Tap(w.lanOn)
	h.flush()
	if lp.turnedOn != 1 || w.lanOn.Visible() || !w.qr.Visible() || w.status.Visible() {
		t.Errorf("after Turn on the LAN: turned on %d, button %v, qr %v, status %v %q", lp.turnedOn, w.lanOn.Visible(), w.qr.Visible(), w.status.Visible(), w.status.Text)
	}
	p.err = errors.New("something else")
	test.Tap(w.again)
	h.flush()
	if w.lanOn.Visible() {
		t.Error("Turn on the LAN offered for another error")
	}
}
