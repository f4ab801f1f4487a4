package commands

import "corral/core/fsbox"

// settle gives rel, renamed into place from the upper layer (a rename
// keeps the inode's owner and mode), to Corral's uid and clears setuid,
// setgid and sticky bits (fsbox.Settle). A failure is logged: the change
// is in place either way.
func (a *applier) settle(rel string) {
	if err := fsbox.Settle(a.real.Root, rel); err != nil {
		a.s.box.Logger().Error("command change left with its owner or special bits", "path", a.real.Visible(rel), "err", err)
	}
}
