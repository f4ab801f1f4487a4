#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# corral's postrm. Removes what the postinst made outside the package's
# files: the AppArmor profile in /etc/apparmor.d (prerm unloaded it) and
# AppArmor's cache of it. Nothing in the users' homes is touched: the
# docs/install.md says what stays there and how to remove it.
set -e
case "$1" in
  remove | purge)
    rm -f /etc/apparmor.d/corral /etc/apparmor.d/disable/corral /etc/apparmor.d/force-complain/corral
    rm -f /var/cache/apparmor/*/corral /var/cache/apparmor/*/corral-netinit 2>/dev/null || true
    ;;
esac
exit 0
