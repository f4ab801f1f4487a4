package ui

import (
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"corral/core/testkit/needs"
	"corral/ui/bustest"
)

// TestDetectNotifier runs a real session bus (dbus-daemon): without a
// notification service on it, Detect says so in its one note and Run
// turns notifications off (one line at start, none per approval); once
// something owns org.freedesktop.Notifications, notifications are on.
func TestDetectNotifier(t *testing.T) {
	needs.Tool(t, "dbus-daemon", "dbus-daemon")
	display, _ := fakeDisplay(t)

	addr := bustest.Start(t)
	env := envOf(map[string]string{"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": addr})

	d := Detect(env)
	if d.Bus == "" || d.Notifier || !strings.Contains(d.Note, "no notification service") {
		t.Fatalf("bus without a notification service: Detect = %+v; want a bus, no notifier, a note saying so", d)
	}

	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if reply, err := conn.RequestName(notificationsName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", notificationsName, reply, err)
	}
	d = Detect(env)
	if !d.Notifier || strings.Contains(d.Note, "notification") {
		t.Fatalf("bus with a notification service: Detect = %+v; want notifier on and no note about it", d)
	}
}
