#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# corral's postrm. Purge removes what the package made outside its files:
# AppArmor's cache of the profile (dpkg removes the profile itself, a
# conffile). Nothing in the users' homes is touched: the README says what
# stays there and how to remove it.
set -e
if [ "$1" = purge ]; then
  rm -f /etc/apparmor.d/disable/corral /etc/apparmor.d/force-complain/corral
  rm -f /var/cache/apparmor/*/corral /var/cache/apparmor/*/corral-netinit 2>/dev/null || true
fi
exit 0
