#!/usr/bin/env bash
# Builds bin/corral for `make build` / `make run` and says what it is doing:
# how many packages need compiling, a running count while they compile,
# when the slow cgo parts start (SQLite's C code above all), and, when
# they are not in the build cache yet, roughly how long that takes. With
# everything cached it prints one line or none.
# Usage: packaging/build.sh <go build flags> <package> (GO names the go command).
set -euo pipefail
GO=${GO:-go}

# The packages this build compiles: those not in the build cache (Stale),
# standard library included when the cache is empty. The main package counts.
pkg=("${@: -1}")
stale=$("$GO" list -deps -f '{{if .Stale}}{{.ImportPath}}{{end}}' "${pkg[@]}" 2>/dev/null || true)
todo=$(printf '%s\n' "$stale" | grep -c . || true)
if [ "${todo:-0}" -eq 0 ]; then
  todo=1
fi

# go-sqlite3 compiles SQLite's C amalgamation (one 9 MB file) with gcc:
# most of a cold build. Measured: "How long a first run takes" in the README.
slow=""
if printf '%s\n' "$stale" | grep -qx 'github.com/mattn/go-sqlite3'; then
  slow=1
  echo "build: compiling $todo packages, SQLite's and Fyne's C code (cgo) among them."
  echo "build: a first build takes about 5 minutes on 2 cores, up to 20 when the machine is busy; later builds take seconds."
elif [ "$todo" -gt 1 ]; then
  echo "build: compiling $todo packages…"
fi

start=$(date +%s)
ticker=""
if [ -n "$slow" ]; then
  # While SQLite's C code compiles nothing else is said for minutes.
  (
    while sleep 60; do
      echo "build: still compiling, $(($(date +%s) - start))s so far…"
    done
  ) &
  ticker=$!
  trap 'kill "$ticker" 2>/dev/null || true' EXIT
fi

# go build -x prints each command as it starts (-v names packages in
# bursts, minutes late): count the compile steps, say when a slow cgo
# package starts and every 25 packages how far it is. On failure a plain
# go build, with everything else cached, prints the compiler's messages.
set +e
"$GO" build -x "$@" 2>&1 | awk -v todo="$todo" -v start="$start" -v quiet="$([ "$todo" -gt 1 ] || echo 1)" '
  function now() { "date +%s" | getline t; close("date +%s"); return t }
  function say(msg) { if (!quiet) { printf "build: %d/%d packages, %ds: %s\n", n, todo, now() - start, msg; fflush() } }
  / -importpath github\.com\/mattn\/go-sqlite3 / && !sqlite { sqlite = 1; say("SQLite'"'"'s C code (cgo), the longest step…") }
  / -importpath github\.com\/go-gl\/(gl|glfw)/ && !gl { gl = 1; say("Fyne'"'"'s OpenGL and window C code (cgo)…") }
  /\/compile / && / -p [^ ]+/ { n++; if (n % 25 == 0) say("compiling…") }
  /\/link / && !linked { linked = 1; say("linking bin/corral…") }
  END { if (!quiet) printf "build: done, %d packages in %ds\n", n, now() - start }'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "build: failed:" >&2
  "$GO" build "$@"
  exit 1
fi
