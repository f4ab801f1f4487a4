package server

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"time"
)

// SessionStore keeps the owner's browser sessions across restarts, each
// only as the SHA-256 of its id with its expiry (store.Store does it).
// A stolen copy therefore opens nothing: the cookie needs the id itself,
// and /ws also the id's second secret, an HMAC under a key derived from
// the owner token (auth.go), which is not in the database.
type SessionStore interface {
	AddSession(ctx context.Context, idSHA256 [32]byte, expires time.Time) error
	EndSession(ctx context.Context, idSHA256 [32]byte) error
	Sessions(ctx context.Context, now time.Time) (map[[32]byte]time.Time, error)
}

// keepSessions makes l write each new and ended session through to st,
// after taking the sessions st still holds. A store that fails leaves the
// sessions in memory only, as before there was one: the owner signs in
// again after a restart.
func (l *logins) keepSessions(ctx context.Context, st SessionStore, log *slog.Logger) {
	kept, err := st.Sessions(ctx, l.now())
	if err != nil {
		log.Warn("browser logins will not survive a restart", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for h, exp := range kept {
		l.sessions[string(h[:])] = exp
	}
	l.keep, l.log = st, log
}

// kept writes a new session through to keep, if there is one.
func kept(keep SessionStore, log *slog.Logger, h [32]byte, exp time.Time) {
	if keep == nil {
		return
	}
	if err := keep.AddSession(context.Background(), h, exp); err != nil {
		log.Warn("this browser login will not survive a restart", "err", err)
	}
}

// forgotten removes an ended session from keep, if there is one.
// Failing, it says so: the session would come back after a restart.
func forgotten(keep SessionStore, log *slog.Logger, h [32]byte) {
	if keep == nil {
		return
	}
	if err := keep.EndSession(context.Background(), h); err != nil {
		log.Error("a signed-out browser login is still in the database and would work again after a restart", "err", err)
	}
}

// sessionHash is how a session id is known everywhere but its cookie.
func sessionHash(sid string) [32]byte { return sha256.Sum256([]byte(sid)) }
