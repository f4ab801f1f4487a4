package policy

import "time"

// SetAsking changes how the owner is asked, from the next question on:
// how long a question waits (approval_timeout; <= 0 keeps it) and
// whether a question is denied at once when no surface is open (strict).
// Questions already waiting keep the deadline they were shown with.
func (p *Policy) SetAsking(timeout time.Duration, strict bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if timeout > 0 {
		p.cfg.Timeout = timeout
	}
	p.cfg.Strict = strict
}
