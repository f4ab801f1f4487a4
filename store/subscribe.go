package store

import "corral/core/audit"

type subscriber struct {
	ch chan audit.Event
}

// Subscribe returns a channel that receives every event committed after
// the call, in commit order and with its id, and a cancel func that closes
// the channel (calling it again does nothing). A subscriber whose buffer
// (Options.SubscriberBuffer) is full when an event commits is dropped: its
// channel is closed, and it must subscribe again and catch up with Query.
// After Close the channel is closed at once.
func (s *Store) Subscribe() (<-chan audit.Event, func()) {
	sub := &subscriber{ch: make(chan audit.Event, s.opts.SubscriberBuffer)}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.subsClosed {
		close(sub.ch)
		return sub.ch, func() {}
	}
	s.subs[sub] = struct{}{}
	return sub.ch, func() { s.unsubscribe(sub) }
}

func (s *Store) unsubscribe(sub *subscriber) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if _, ok := s.subs[sub]; ok {
		delete(s.subs, sub)
		close(sub.ch)
	}
}

// publish hands a committed batch to every subscriber without blocking.
// Sends and closes happen under subMu, so none races a cancel.
func (s *Store) publish(batch []*recordReq) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if len(s.subs) == 0 {
		return
	}
	for sub := range s.subs {
		for _, r := range batch {
			select {
			case sub.ch <- r.ev:
				continue
			default:
			}
			delete(s.subs, sub)
			close(sub.ch)
			s.opts.Logger.Warn("audit store: dropped a subscriber that fell behind")
			break
		}
	}
}

func (s *Store) closeSubscribers() {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for sub := range s.subs {
		delete(s.subs, sub)
		close(sub.ch)
	}
	s.subsClosed = true
}
