package assets

import _ "embed" // the icons below

// Corral's icons, rendered from the SVGs in icons/ by icons/gen.go.
//
// Icon is the application icon (256 px: windows, the .desktop entry, the
// package). IconTray, IconPending and IconPaused are the tray icon's three
// states (64 px): normal, approvals waiting (orange "!" badge) and agents
// paused (greyed, with a pause badge).
var (
	//go:embed icons/corral.png
	Icon []byte
	//go:embed icons/tray.png
	IconTray []byte
	//go:embed icons/tray-pending.png
	IconPending []byte
	//go:embed icons/tray-paused.png
	IconPaused []byte
	//go:embed icons/corral.svg
	IconSVG []byte
)
