#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# corral's postinst. Installs and loads the AppArmor profile where
# AppArmor reads it, and
# after an upgrade ($1 = configure, $2 = the version replaced) asks every
# running Corral (the tray app and `corral serve`, of any user) to restart
# into the new program: SIGUSR1, on which Corral stops cleanly and starts
# again in place from /usr/bin/corral. (A Corral older than 0.1.0 ends on
# it instead: its user unit restarts it, a tray app has to be started
# again.)
set -e

# corral_daemons prints the PIDs of running Corral daemons: /usr/bin/corral,
# replaced or not, with no command or `serve` (not `corral mcp`, the CLI,
# or the document reader it runs in a sandbox).
corral_daemons() {
  prog=/usr/bin/corral
  for d in /proc/[0-9]*; do
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    [ "$exe" = "$prog" ] || [ "$exe" = "$prog (deleted)" ] || continue
    cmd=$(tr '\0' '\n' < "$d/cmdline" 2>/dev/null | sed -n 2p) || continue
    case "$cmd" in
      "" | -* | serve) echo "${d#/proc/}" ;;
    esac
  done
}

if [ "$1" = configure ]; then
  # The profile goes where AppArmor loads profiles at boot only if this
  # AppArmor reads it: 4.0 and later (Ubuntu 24.04, Debian 13). Older ones
  # know no userns rule, restrict nothing, and would fail on it at boot.
  profile=/usr/share/corral/apparmor/corral
  if command -v apparmor_parser >/dev/null 2>&1 && apparmor_parser -Q -K "$profile" >/dev/null 2>&1; then
    cp "$profile" /etc/apparmor.d/corral
    if [ -d /sys/kernel/security/apparmor ]; then
      apparmor_parser -r -T -W /etc/apparmor.d/corral ||
        echo "corral: the AppArmor profile did not load; Corral may be refused user namespaces (see /usr/share/doc/corral/docs/install.md)" >&2
    fi
  else
    rm -f /etc/apparmor.d/corral
  fi
  if [ -n "${2:-}" ]; then
    n=0
    for pid in $(corral_daemons); do
      kill -USR1 "$pid" 2>/dev/null && n=$((n + 1))
    done
    if [ "$n" -gt 0 ]; then
      echo "corral: asked $n running Corral to restart into the new version"
    fi
  fi
fi
exit 0
