package server

import (
	"context"
	"net/http"
	"time"

	"corral/app/pairing"
	"corral/app/rpc"
	"corral/store"
)

// Devices is what pairing needs of the store (app/pairing).
type Devices = pairing.Store

// deviceCookie names a paired device's cookie (app/pairing sets it).
const deviceCookie = pairing.Cookie

// deviceMethods are what a paired device may call: the owner's approval
// and file-browsing abilities, and reading the log — nothing more.
var deviceMethods = map[string]bool{
	"session.info": true, "approval.list": true, "approval.respond": true, "approval.subscribe": true,
	"folder.list": true, "file.stat": true, "link.create": true, "agents.pause": true, "agents.resume": true,
	"audit.query": true, "audit.stats": true, "audit.subscribe": true, "rule.list": true, "client.list": true,
	// Withdrawing a link only narrows what is shared, like a pause.
	"links.list": true, "link.revoke": true,
	// The phone may see the owner's settings, not change them.
	"settings.get": true,
}

// newPairing is the server's pairing (app/pairing) over devices (nil:
// pairing unavailable): the LAN side's address and fingerprint as
// ListenLAN set them, the audit log, the second secrets and the Origin
// check the server's other routes use.
func (s *Server) newPairing(devices Devices) *pairing.Service {
	return pairing.New(pairing.Config{
		Store: devices, Now: s.now, Log: s.log, Record: s.record, Secret: s.secretKey.secretFor,
		SameOrigin: func(r *http.Request) bool { return sameOrigin(r, s.cfg.Server.PublicURL) },
		LAN: func() (string, string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.lanURL, s.lanFP
		},
		QR:         qrRows,
		HangUp:     func(id string) { s.finishConns(func(c *conn) bool { return c.deviceID == id }) },
		Stylesheet: func() string { return string(uiAssets().files["app.css"].body) },
	})
}

// StartPairing makes a fresh one-time pairing code for the owner to show
// (pairing.start, the tray): app/pairing's Service.Start.
func (s *Server) StartPairing(ctx context.Context, by string) (pairing.Code, error) {
	return s.pair.Start(ctx, by)
}

// devicePairing is what the device methods use of pairing
// (pairing.Service): showing a code, listing and revoking devices.
type devicePairing interface {
	Start(ctx context.Context, by string) (pairing.Code, error)
	List(ctx context.Context) ([]store.Device, error)
	Revoke(ctx context.Context, by, id string) error
}

// deviceArea answers pairing.start, device.list and device.revoke.
type deviceArea struct{ pair devicePairing }

func (s *Server) deviceArea() deviceArea { return deviceArea{pair: s.pair} }

func (d deviceArea) methods(add func(name string, m method)) {
	add("pairing.start", method{owner: true, fn: d.pairingStart})
	add("device.list", method{owner: true, fn: d.list})
	add("device.revoke", method{owner: true, fn: d.revoke})
}

func (d deviceArea) pairingStart(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	p, err := d.pair.Start(ctx, c.caller.Client)
	if err != nil {
		return nil, err
	}
	return pairingResult{URL: p.URL, Code: p.Code, ExpiresAt: p.Expires.UTC().Format(time.RFC3339), QR: p.QR, Fingerprint: p.Fingerprint}, nil
}

func (d deviceArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	list, err := d.pair.List(ctx)
	if err != nil {
		return nil, err
	}
	return devicesResult{Devices: list}, nil
}

func (d deviceArea) revoke(ctx context.Context, c *call) (any, error) {
	var a struct {
		ID string `json:"id" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	if err := d.pair.Revoke(ctx, c.caller.Client, a.ID); err != nil {
		return nil, err
	}
	return idResult{ID: a.ID}, nil
}
