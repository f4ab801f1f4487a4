// Package pairingtest holds the fakes that tests of pairing, and of the
// server's login handler over it, share: a map of paired devices (a
// pairing.Store). It is for tests only:
// store/ tests the real device table.
package pairingtest

import (
	"context"
	"maps"
	"slices"
	"time"

	"corral/store"
)

// Devices are paired devices over a map by token; it is a pairing.Store.
// Make one with a literal (Devices{} or with devices in it).
type Devices map[string]store.Device

// AddDevice keeps d under token.
func (f Devices) AddDevice(ctx context.Context, d store.Device, token string) error {
	f[token] = d
	return nil
}

// DeviceByToken is the device kept under token.
func (f Devices) DeviceByToken(ctx context.Context, token string) (store.Device, bool, error) {
	d, ok := f[token]
	return d, ok, nil
}

// TouchDevice notes that device id was seen at t.
func (f Devices) TouchDevice(ctx context.Context, id string, t time.Time) error {
	for tok, d := range f {
		if d.ID == id {
			d.LastSeen = t
			f[tok] = d
		}
	}
	return nil
}

// Devices lists the devices, in no order.
func (f Devices) Devices(ctx context.Context) ([]store.Device, error) {
	return slices.Collect(maps.Values(f)), nil
}

// RemoveDevice forgets device id; it reports whether there was one.
func (f Devices) RemoveDevice(ctx context.Context, id string) (bool, error) {
	for tok, d := range f {
		if d.ID == id {
			delete(f, tok)
			return true, nil
		}
	}
	return false, nil
}
