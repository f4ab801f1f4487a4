#!/usr/bin/env bash
# Builds bin/corral for `make build` / `make run` and says what it is doing:
# how many packages need compiling, a running count while they compile, and,
# when the cgo part (go-sqlite3, Fyne's GL and X11 glue) is not in the build
# cache yet, roughly how long that takes. With everything cached it prints
# one line. Usage: packaging/build.sh <go build flags and packages>
# (GO may name the go command).
set -euo pipefail
GO=${GO:-go}

# The packages this build compiles: those not in the build cache (Stale),
# standard library included when the cache is empty. The main package counts.
pkgs=("${@: -1}")
stale=$("$GO" list -deps -f '{{if .Stale}}{{.ImportPath}}{{end}}' "${pkgs[@]}" 2>/dev/null || true)
todo=$(printf '%s\n' "$stale" | grep -c . || true)
if [ "${todo:-0}" -eq 0 ]; then
  todo=1
fi

# go-sqlite3 compiles SQLite's C amalgamation (one 9 MB file) with gcc: most
# of a cold build. Measured: see "How long a first run takes" in the README.
slow=""
if printf '%s\n' "$stale" | grep -qx 'github.com/mattn/go-sqlite3'; then
  slow=1
fi
if [ -n "$slow" ]; then
  echo "build: compiling $todo packages, SQLite and Fyne's C parts (cgo) among them."
  echo "build: the first build takes about 6–10 minutes on 2 cores (longer on a busy machine); later builds take seconds."
elif [ "$todo" -gt 1 ]; then
  echo "build: compiling $todo packages…"
fi

start=$(date +%s)
# go build -v names each package as it starts compiling it (on stderr).
# Print a count every 25 packages and when a slow cgo one starts, with the
# time so far, so a long wait never looks like a hang.
"$GO" build -v "$@" 2>&1 | awk -v todo="$todo" -v start="$start" '
  function now() { "date +%s" | getline t; close("date +%s"); return t }
  function say(msg) { printf "build: %d/%d packages, %ds: %s\n", n, todo, now() - start, msg; fflush() }
  # A compile error or a warning: pass it through as it is.
  /^[#.\/]|: |^\t/ { print; fflush(); next }
  {
    n++
    if ($0 == "github.com/mattn/go-sqlite3") say("SQLite (cgo, the long one)…")
    else if ($0 ~ /^fyne\.io\/fyne\/v2\/internal\/driver\/glfw$|go-gl\/glfw/) say("Fyne'"'"'s window glue (cgo)…")
    else if (n % 25 == 0) say("building…")
  }
  END { if (n > 1) printf "build: done, %d packages in %ds\n", n, now() - start }'
