#!/usr/bin/env bash
# Links ~/.local/bin/corral to the corral that `make run` built ($1), so an
# app's MCP config and the shell have one path that survives a rebuild. It
# never replaces a file that is not a symbolic link (an installed copy, say),
# and says when ~/.local/bin is not on PATH.
set -euo pipefail
target=$1
dir="${HOME}/.local/bin"
link="$dir/corral"
mkdir -p "$dir"
if [ -e "$link" ] && [ ! -L "$link" ]; then
  echo "run: $link is a file, not a link; left as it is"
  exit 0
fi
if [ "$(readlink "$link" 2>/dev/null || true)" != "$target" ]; then
  ln -sfn "$target" "$link"
  echo "run: linked $link to $target"
fi
case ":$PATH:" in
  *":$dir:"*) ;;
  *) echo "run: $dir is not on your PATH; add it to run corral from any shell" ;;
esac
