package server

import "corral/app/connect"

// Connecting an agent app lives in app/connect (connect.Setup); here are
// its rows and what it is given of the server.

type (
	connectResult = connect.Shown
	connectApp    = connect.AppSetup
)

// connectArea registers agent.connect, agent.connect_preview and
// agent.connect_write, all the owner's (app/connect answers them).
type connectArea struct{ connect.Setup }

func (s *Server) connectArea() connectArea {
	return connectArea{connect.Setup{KeyOf: s.dir.KeyOf, Home: s.ownerHome, Command: s.corralCommand, URL: s.LocalURL, Now: s.now, Record: s.record,
		ConfigFile: s.cfg.Path, FromConfig: s.dir.FromConfig}}
}

func (x connectArea) methods(add func(name string, m method)) {
	add("agent.connect", owned(x.Show))
	add("agent.connect_preview", owned(x.Preview))
	add("agent.connect_write", owned(x.Write))
}
