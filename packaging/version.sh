#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints Corral's version, the one `corral --version`, the dashboard and
# the .deb carry. VERSION names the last release; a build of the commit
# tagged v<VERSION> is that version, any other build is
#   <VERSION>+git<commit time, UTC, YYYYMMDDhhmmss>.<short hash>[.dirty]
# which Debian sorts after the release and in commit-time order (a later
# commit, a later version; uncommitted changes after their commit).
# Run from anywhere inside the repository; without git (a source tarball)
# it prints VERSION alone.
set -eu
cd "$(dirname "$0")/.."
v=$(tr -d ' \n' < VERSION)
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "$v"
  exit 0
fi
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  dirty=".dirty"
fi
if [ -z "$dirty" ] && [ "$(git tag --points-at HEAD --list "v$v")" = "v$v" ]; then
  echo "$v"
  exit 0
fi
when=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
hash=$(git rev-parse --short=7 HEAD)
echo "$v+git$when.$hash$dirty"
