#!/usr/bin/env bash
# Installs the system packages Corral needs to build, run and test.
# Idempotent: packages already installed are left alone, and apt is only
# called when something is missing. Runs apt as root, or through sudo.
set -euo pipefail

pkgs=(
  gcc pkg-config            # cgo: go-sqlite3, Fyne
  libgl1-mesa-dev xorg-dev  # Fyne's GL and X11 headers
  bubblewrap                # the sandbox for command.run
  xvfb xauth dbus-x11 xdotool # desktop tests under a virtual display
  imagemagick               # its `import` takes the desktop tests' screenshots
  xfce4-panel               # a real tray host (StatusNotifier) for the tray tests
  chromium                  # browser tests of the dashboard and /files/out
  wrk nginx-light           # benchmarks of /files/out against nginx
  sqlite3 ca-certificates
  ghostscript               # ps2pdf writes the PDFs of the document_read tests
  poppler-utils             # pdftotext, the reference of the document_read benchmark
  iproute2                  # ip: the network tests' test host in a namespace of its own
  curl python3 patch        # programs the tests run inside the sandbox, and patch -p1 (benchmark)
  dpkg-dev lintian          # make package: dpkg-shlibdeps, dpkg-parsechangelog; its check
  apparmor                  # apparmor_parser checks the package's AppArmor profile
)

# The MCP tests drive Node clients (the MCP Inspector, the TypeScript SDK):
# use the machine's Node.js when there is one, else Debian's.
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "deps.sh: installing ${#missing[@]} packages with apt (about 1–3 minutes the first time, once): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
echo "deps.sh: apt-get update…"
$sudo apt-get update -qq
echo "deps.sh: apt-get install…"
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps.sh: done"
