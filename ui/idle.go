package ui

import "sync"

// idler parks Fyne's event loop while no Corral window is on screen.
//
// Fyne's GLFW driver wakes 60 times a second to poll X events and draw,
// whether or not a window is shown: about 1.75% of a core for an icon in
// the tray. The tray icon and its menu live on D-Bus (systray), not in
// that loop, so while nothing is on screen the loop runs park, which
// blocks until something is posted to the loop again (Tray.do wakes it
// first) or the tray stops.
type idler struct {
	mu      sync.Mutex
	pending int           // functions posted to the loop and not run yet
	wake    chan struct{} // non-nil while parked
	queued  bool          // a park is posted and has not run yet
	stopped bool          // never park again
}

// posting wakes the loop for a function about to be posted to it.
func (p *idler) posting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending++
	p.release()
}

// ran says a posted function has started.
func (p *idler) ran() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending--
}

// schedule reports whether a park should be posted: once until it runs.
func (p *idler) schedule() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queued || p.stopped {
		return false
	}
	p.queued = true
	return true
}

// park blocks the loop's goroutine until something is posted or the
// idler stops; it returns at once when something is waiting already.
func (p *idler) park() {
	p.mu.Lock()
	p.queued = false
	if p.pending > 0 || p.stopped {
		p.mu.Unlock()
		return
	}
	wake := make(chan struct{})
	p.wake = wake
	p.mu.Unlock()
	<-wake
}

// stop wakes the loop for good (quitting needs it running).
func (p *idler) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.release()
}

func (p *idler) release() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}
