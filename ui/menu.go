package ui

import (
	"fmt"
	"strings"

	"corral/core/policy"
	"corral/core/visible"
	"corral/core/words"
)

// Status is what the tray's status line shows of the running Corral.
type Status struct {
	Listen string // the local URL, "http://127.0.0.1:8765"
	Agents int    // agents with a connection open (not dashboards or phones)
	Paused bool
	// Problem, when set, is why Corral refuses every agent operation
	// now (it cannot write its audit log), in a few words.
	Problem string
}

// badge is the tray icon's state. Pending approvals win over paused (the
// two rarely meet: pausing denies what is pending).
type badge int

const (
	badgeNone badge = iota
	badgePending
	badgePaused
)

func (b badge) String() string {
	switch b {
	case badgePending:
		return "pending"
	case badgePaused:
		return "paused"
	}
	return "none"
}

func badgeFor(st Status, pending int) badge {
	switch {
	case pending > 0:
		return badgePending
	case st.Paused:
		return badgePaused
	}
	return badgeNone
}

// action is what a menu item does when chosen.
type action int

const (
	actNone action = iota
	actApproval
	actDashboard
	actConnect
	actPause
	actResume
	actActivity
	actSettings
	actPair
	actQuit
)

// menuItem is one line of the tray menu as plain data: menuModel decides
// the lines, the tray icon only renders them.
type menuItem struct {
	Label     string
	Disabled  bool
	Hidden    bool // kept in the menu, not shown (see menuModel)
	Separator bool
	Action    action
	ID        string // actApproval: the approval to show
	Children  []menuItem
}

// Menu labels that tests and the smoke test look for.
const (
	labelDashboard = "Open dashboard"
	labelConnect   = "Connect an agent…"
	labelPause     = words.PauseAgents
	labelResume    = words.ResumeAgents
	labelActivity  = "Recent activity…"
	labelSettings  = "Settings…"
	labelPair      = "Pair a phone…"
	labelQuit      = "Quit"
	labelNoPending = "No approvals pending"
)

// menuModel is the tray menu for a state; canPair adds "Pair a phone…".
//
// Its shape (the lines, the separators, which line has a submenu) is the
// same for every state of one run: a line that does not apply is Hidden,
// not left out. Tray hosts that render the menu with libdbusmenu-gtk
// (Xfce, Cinnamon, GNOME's extension) leave a submenu empty when it
// arrives in the same update as its children, so the pending submenu is
// there from the start and only its children and visibility change.
func menuModel(st Status, pending []policy.Approval, canPair bool) []menuItem {
	sub := make([]menuItem, 0, len(pending))
	for _, a := range pending {
		sub = append(sub, menuItem{Label: clip(visible.Line(prompt{a: a}.title()), 70), Action: actApproval, ID: a.ID})
	}
	items := []menuItem{{Label: statusLine(st), Disabled: true}, {Separator: true},
		{Label: labelNoPending, Disabled: true, Hidden: len(pending) > 0},
		{Label: fmt.Sprintf("Approvals pending (%d)", len(pending)), Hidden: len(pending) == 0, Children: sub}}
	items = append(items, menuItem{Separator: true}, menuItem{Label: labelDashboard, Action: actDashboard},
		menuItem{Label: labelConnect, Action: actConnect})
	if st.Paused {
		items = append(items, menuItem{Label: labelResume, Action: actResume})
	} else {
		items = append(items, menuItem{Label: labelPause, Action: actPause})
	}
	items = append(items, menuItem{Label: labelActivity, Action: actActivity})
	if canPair {
		items = append(items, menuItem{Label: labelPair, Action: actPair})
	}
	return append(items,
		menuItem{Label: labelSettings, Action: actSettings},
		menuItem{Separator: true},
		menuItem{Label: labelQuit, Action: actQuit},
	)
}

// statusLine is "127.0.0.1:8765 · 2 agents connected · running".
func statusLine(st Status) string {
	addr := strings.TrimPrefix(strings.TrimPrefix(st.Listen, "http://"), "https://")
	if addr == "" {
		addr = "starting"
	}
	agents := fmt.Sprintf("%d agents connected", st.Agents)
	if st.Agents == 1 {
		agents = "1 agent connected"
	}
	state := "running"
	if st.Paused {
		state = "paused"
	}
	if st.Problem != "" {
		state = "refusing agents: " + st.Problem
	}
	return addr + " · " + agents + " · " + state
}

// clip shortens s to at most n runes, with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
