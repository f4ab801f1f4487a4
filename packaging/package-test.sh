#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make package-test: installs the package on this machine (as root, with
# apt-get), runs Corral as an ordinary user, upgrades the package under it,
# removes it while it runs and purges it, checking at each step what the
# README and docs/install.md promise. Leaves the machine without the package, as it found it.
#
#   packaging/package-test.sh OLD.deb NEW.deb   # NEW sorts after OLD
set -euo pipefail
old_deb=$(realpath "$1")
new_deb=$(realpath "$2")
user=corral-pkgtest
fail() { printf 'package-test: FAIL: %b\n' "$*" >&2; exit 1; }
say() { echo "package-test: $*"; }
[ "$(id -u)" -eq 0 ] || fail "run as root (it installs the package)"
if dpkg-query -W -f='${Status}' corral 2>/dev/null | grep -q 'install ok'; then
  fail "corral is installed already; this test installs and purges it"
fi
old_v=$(dpkg-deb -f "$old_deb" Version)
new_v=$(dpkg-deb -f "$new_deb" Version)
dpkg --compare-versions "$old_v" lt "$new_v" || fail "$new_v does not sort after $old_v"

id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
home=$(getent passwd "$user" | cut -d: -f6)
export DEBIAN_FRONTEND=noninteractive
as_user() { runuser -u "$user" -- env -i HOME="$home" PATH=/usr/bin:/bin CORRAL_HOME="$home/corral-home" "$@"; }
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  apt-get purge -y -qq corral >/dev/null 2>&1 || true
  userdel -r "$user" >/dev/null 2>&1 || true
}
trap cleanup EXIT
rm -rf "$home/corral-home"

say "install $old_v"
apt-get install -y -qq --no-install-recommends "$old_deb" >/dev/null
[ "$(/usr/bin/corral --version)" = "corral $old_v" ] || fail "corral --version: $(/usr/bin/corral --version)"
zcat /usr/share/doc/corral/changelog.gz | head -1 | grep -qF "($old_v)" || fail "changelog does not start with $old_v"
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' /usr/share/doc/corral/copyright || fail "no copyright file"
man -w corral >/dev/null 2>&1 || [ -f /usr/share/man/man1/corral.1.gz ] || fail "no man page"
# The AppArmor profile is installed where this AppArmor reads it (4.0 and
# later), and only there.
if command -v apparmor_parser >/dev/null 2>&1 && apparmor_parser -Q -K /usr/share/corral/apparmor/corral >/dev/null 2>&1; then
  [ -f /etc/apparmor.d/corral ] || fail "no /etc/apparmor.d/corral where apparmor_parser reads it"
else
  [ -e /etc/apparmor.d/corral ] && fail "/etc/apparmor.d/corral installed where apparmor_parser cannot read it (it would fail at boot)"
fi

say "start Corral as $user"
out=$(mktemp)
runuser -u "$user" -- env -i HOME="$home" PATH=/usr/bin:/bin CORRAL_HOME="$home/corral-home" \
  /usr/bin/corral serve --headless --listen 127.0.0.1:0 >"$out" 2>&1 &
pid=$!
version() { as_user /usr/bin/corral call session.info 2>/dev/null | sed -n 's/^  "version": "\([^"]*\)",\{0,1\}$/\1/p'; }
wait_version() {
  for _ in $(seq 600); do
    [ "$(version)" = "$1" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "Corral ended; its output:\n$(cat "$out")"
    sleep 0.1
  done
  fail "Corral never said version $1 (it says $(version)); its output:\n$(cat "$out")"
}
wait_version "$old_v"
key=$(sed -n 's/^key = "\(.*\)"/\1/p' "$home/corral-home/config.toml" | head -1)
url=$(sed -n 's/^corral: listening on //p' "$out" | tail -1)
as_user env CORRAL_URL="$url" CORRAL_KEY="$key" \
  /usr/bin/corral call file.write '{"path":"notes/before-upgrade.txt","content":"kept"}' >/dev/null
as_user env CORRAL_URL="$url" CORRAL_KEY="$key" /usr/bin/corral call command.run '{"command":"echo before"}' | grep -q '"stdout": "before\\n"' ||
  fail "a command before the upgrade"

say "upgrade to $new_v while it runs"
apt-get install -y -qq --no-install-recommends "$new_deb"
wait_version "$new_v"
kill -0 "$pid" || fail "the upgrade ended Corral"
url=$(sed -n 's/^corral: listening on //p' "$out" | tail -1)
as_user /usr/bin/corral audit --op file.write | grep -q before-upgrade.txt || fail "the audit log lost the write before the upgrade"
as_user env CORRAL_URL="$url" CORRAL_KEY="$key" /usr/bin/corral call command.run '{"command":"echo after"}' | grep -q '"stdout": "after\\n"' ||
  fail "a command after the upgrade (the agent's key, bubblewrap, corral-netinit)"

say "remove while it runs"
apt-get remove -y -qq corral
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "Corral still runs 30 s after apt-get remove"
status=0
wait "$pid" || status=$?
pid=""
[ "$status" -eq 0 ] || fail "Corral exited with status $status after apt-get remove (a clean stop is 0); its output:\n$(cat "$out")"
[ -e /usr/bin/corral ] && fail "/usr/bin/corral is still there"
[ -e /etc/apparmor.d/corral ] && fail "remove left /etc/apparmor.d/corral"

say "purge"
apt-get purge -y -qq corral >/dev/null
[ -e /usr/lib/corral ] && fail "purge left /usr/lib/corral"
[ -e /usr/share/doc/corral ] && fail "purge left /usr/share/doc/corral"
# What stays is the user's, as docs/install.md says.
for f in config.toml corral.db owner.token secret.key; do
  [ -e "$home/corral-home/$f" ] || fail "the user's $f is gone"
done
say "ok: $old_v -> $new_v upgraded while running, removed while running, purged"
