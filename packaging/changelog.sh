#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints the package's changelog for version $1: packaging/changelog, with
# an entry for $1 on top when it is a snapshot (packaging/version.sh), dated
# with its commit so the same commit gives the same package.
set -eu
cd "$(dirname "$0")/.."
v=$1
top=$(dpkg-parsechangelog -l packaging/changelog -S Version)
if [ "$v" != "$top" ]; then
  when=$(git show -s --format=%cD HEAD 2>/dev/null || date -R)
  hash=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
  printf 'corral (%s) unstable; urgency=medium\n\n  * Snapshot of commit %s, after %s.\n\n -- Corral maintainers <maintainers@corral.invalid>  %s\n\n' "$v" "$hash" "$top" "$when"
fi
cat packaging/changelog
