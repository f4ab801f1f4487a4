package pairing

import (
	"context"
	"time"

	"corral/core/errs"
)

// Code is one started pairing: what a phone opens and how to draw it.
type Code struct {
	URL     string    // the LAN URL of the pairing page, code included
	Code    string    // the one-time code, spent by the first POST /pair
	QR      []string  // the QR code of URL, one row per string, '1' dark, no quiet zone
	Expires time.Time // the code is refused from then on
	// Fingerprint is the SHA-256 of the LAN side's certificate, to be
	// compared with what the phone's browser shows (lancert.go). URL
	// carries it too, as its fragment "#sha256=…", so the QR code holds it.
	Fingerprint string
}

// Start makes a fresh one-time pairing code, valid for five minutes, for
// the owner to show as a QR code (pairing.start, the tray). Codes made
// before stay valid until they expire or are spent.
//
// While the LAN side is off (Config.LAN answers no URL) it answers an
// *errs.Error of kind unavailable whose sentence says what to change.
//
// Each code made is an audit event (op pairing.start, client by).
func (s *Service) Start(ctx context.Context, by string) (Code, error) {
	base, fp := s.cfg.LAN()
	if base == "" {
		return Code{}, errs.New(errs.Unavailable, "", "Pairing needs the LAN, which is off: turn it on with Turn on the LAN on the dashboard's Devices page (or under Settings); no restart is needed.")
	}
	if err := s.cfg.Record(ctx, by, "pairing.start", base, "a one-time pairing code was shown"); err != nil {
		return Code{}, err
	}
	code, exp := s.codes.newCode(s.cfg.Now())
	u := base + "/pair?code=" + code + "#sha256=" + fp
	rows, err := s.cfg.QR(u)
	if err != nil {
		return Code{}, err
	}
	return Code{URL: u, Code: code, QR: rows, Expires: exp, Fingerprint: fp}, nil
}
