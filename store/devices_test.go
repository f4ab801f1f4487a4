package store

import (
	"context"
	"testing"
	"time"
)

func TestDevices(t *testing.T) {
	t.Parallel()
	s, path := openTest(t, Options{})
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := s.AddDevice(ctx, Device{ID: "dv_1", Name: "Phone", Paired: now, LastSeen: now}, "token-one"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDevice(ctx, Device{ID: "dv_2", Name: "Tablet", Paired: now, LastSeen: now}, "token-one"); err == nil {
		t.Error("a second device with the same token was accepted")
	}
	s = reopen(t, s, path)
	d, ok, err := s.DeviceByToken(ctx, "token-one")
	if err != nil || !ok || d.ID != "dv_1" || d.Name != "Phone" || !d.Paired.Equal(now) {
		t.Fatalf("by token: %+v %v %v", d, ok, err)
	}
	if _, ok, _ := s.DeviceByToken(ctx, "token-two"); ok {
		t.Error("unknown token found a device")
	}
	later := now.Add(time.Hour)
	s.TouchDevice(ctx, "dv_1", later)
	list, _ := s.Devices(ctx)
	if len(list) != 1 || !list[0].LastSeen.Equal(later) {
		t.Errorf("devices: %+v", list)
	}
	if ok, _ := s.RemoveDevice(ctx, "dv_1"); !ok {
		t.Error("remove")
	}
	if _, ok, _ := s.DeviceByToken(ctx, "token-one"); ok {
		t.Error("revoked token still works")
	}
}
