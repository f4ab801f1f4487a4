package links

import "time"

// SetLinkLimits changes, for links made from now on, the default
// lifetime, the longest a caller may ask for and the largest report
// SaveResult takes (values <= 0 keep what is set). Links already made keep
// the expiry they were signed with.
func (s *Service) SetLinkLimits(expiry, maxExpiry time.Duration, saveResultMaxKB int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if expiry > 0 {
		s.linkCfg.Expiry = expiry
	}
	if maxExpiry > 0 {
		s.linkCfg.MaxExpiry = maxExpiry
	}
	if saveResultMaxKB > 0 {
		s.linkCfg.SaveResultMaxKB = saveResultMaxKB
	}
}
