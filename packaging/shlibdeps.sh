#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints the Depends of the ELF files given, as dpkg-shlibdeps computes
# them from the libraries they link and the versions of the symbols they
# use ("libc6 (>= 2.34), libgl1, …"). dpkg-shlibdeps wants a Debian
# source tree: it gets a throwaway one.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/debian"
printf 'Source: corral\n\nPackage: corral\nArchitecture: any\n' > "$tmp/debian/control"
files=""
for f in "$@"; do
  files="$files $(realpath "$f")"
done
# shellcheck disable=SC2086
out=$(cd "$tmp" && dpkg-shlibdeps -O $files)
echo "${out#shlibs:Depends=}"
