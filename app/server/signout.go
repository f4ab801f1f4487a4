package server

import "net/http"

// signOutDevice handles POST /logout from a paired device: with the
// device cookie and its second secret, the device is revoked on the
// server (as Devices → Revoke on the computer would), its connections
// end, its cookie is cleared, and the phone is sent to the pairing page.
// It reports whether the request was a device's sign-out.
func (s *Server) signOutDevice(w http.ResponseWriter, r *http.Request) bool {
	d, ok := s.signedDevice(r)
	if !ok {
		return false // the cookie alone signs nobody out
	}
	if _, err := s.devices.RemoveDevice(r.Context(), d.ID); err != nil {
		s.log.Error("device sign out", "err", err)
		http.Error(w, "Corral could not sign this phone out; try again.", http.StatusInternalServerError)
		return true
	}
	s.finishConns(func(cn *conn) bool { return cn.deviceID == d.ID })
	if err := s.record(r.Context(), deviceCaller(d).Client, "device.revoke", d.ID, "signed out on the device"); err != nil {
		s.log.Error("device sign out: audit", "err", err)
	}
	http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	http.Redirect(w, r, "/pair", http.StatusSeeOther)
	return true
}
