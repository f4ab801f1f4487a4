#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# corral's prerm. Before a removal ($1 = remove), every running Corral (the
# tray app and `corral serve`, of any user) is stopped cleanly: SIGTERM, on
# which it finishes the calls under way (up to 10 s), writes its audit log
# and exits; one still running after 20 s is killed. An upgrade leaves them
# running: the new package's postinst restarts them.
set -e

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

if [ "$1" = remove ] || [ "$1" = deconfigure ]; then
  pids=$(corral_daemons)
  if [ -n "$pids" ]; then
    echo "corral: stopping the running Corral ($(echo $pids | wc -w))"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    i=0
    while [ $i -lt 200 ]; do
      left=""
      for pid in $pids; do
        [ -d "/proc/$pid" ] && left="$left $pid"
      done
      [ -z "$left" ] && break
      sleep 0.1
      i=$((i + 1))
    done
    if [ -n "$left" ]; then
      echo "corral: killing Corral that did not stop within 20 s:$left" >&2
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null || true
    fi
  fi
  if [ -f /etc/apparmor.d/corral ] && [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null 2>&1; then
    apparmor_parser -R /etc/apparmor.d/corral >/dev/null 2>&1 || true
  fi
fi
exit 0
