#!/usr/bin/env bash
# End-to-end test setup (idempotent): Debian packages, code-server 4.100.3 (= VS Code 1.100.3)
# into test/e2e/code-server/node_modules, and the repo's own dev dependencies (playwright-core,
# @vscode/vsce, esbuild). Needs only the npm registry and Debian's apt repositories.
# Installs only what is missing; a second run takes a few seconds.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CS_VERSION=4.100.3
t0=$(date +%s)
cd "$HERE"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# 1. Debian packages: chromium (driven by playwright-core), libkrb5-dev (VS Code's native
#    'kerberos' module), ripgrep (stands in for @vscode/ripgrep's GitHub download), and a
#    toolchain for node-gyp. Only the missing ones are installed; no apt-get update otherwise.
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in chromium libkrb5-dev ripgrep build-essential python3 pkg-config; do
  if have_pkg "$p"; then continue; fi
  # python3 may come from elsewhere (pyenv); node-gyp only needs a python3 on PATH
  if [ "$p" = python3 ] && command -v python3 >/dev/null; then continue; fi
  missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "apt: all packages present"
fi
command -v rg >/dev/null && test -x /usr/bin/chromium

# 2. code-server. Skipped when the pinned version is installed and its postinstall finished
#    (ripgrep binary and VS Code's node_modules in place).
CS_DIR="$HERE/code-server/node_modules/code-server"
VSCODE_DIR="$CS_DIR/lib/vscode"
cs_ok() {
  [ -f "$CS_DIR/package.json" ] &&
  [ "$(node -p "require('$CS_DIR/package.json').version" 2>/dev/null)" = "$CS_VERSION" ] &&
  [ -x "$VSCODE_DIR/node_modules/@vscode/ripgrep/bin/rg" ] &&
  [ -d "$VSCODE_DIR/extensions/node_modules" ] &&
  [ -f "$VSCODE_DIR/node_modules/node-pty/build/Release/pty.node" ] &&
  [ -f "$HERE/code-server/node_modules/.causeway-e2e-installed" ]
}
if cs_ok; then
  echo "code-server $CS_VERSION: already installed"
else
  echo "code-server $CS_VERSION: installing (takes a few minutes)"
  # Seed @vscode/ripgrep's download cache with Debian's rg so its postinstall "finds a cached
  # download" instead of calling api.github.com. Values belong to code-server 4.100.3:
  # lib/vscode/npm-shrinkwrap.json -> @vscode/ripgrep 1.15.11, whose lib/postinstall.js has
  # VERSION = 'v13.0.0-10' and target x86_64-unknown-linux-musl on linux x64.
  RG_PKG_VERSION=1.15.11
  RG_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
  TMP_DIR="$HERE/.cache/tmp"                 # the cache lives in os.tmpdir()
  RG_CACHE="$TMP_DIR/vscode-ripgrep-cache-${RG_PKG_VERSION}"
  mkdir -p "$RG_CACHE"
  if [ ! -s "$RG_CACHE/$RG_ASSET" ]; then
    stage="$(mktemp -d)"
    cp "$(command -v rg)" "$stage/rg"
    tar -czf "$RG_CACHE/$RG_ASSET" -C "$stage" rg
    rm -rf "$stage"
  fi
  (
    cd "$HERE/code-server"
    # Its postinstall runs 'npm install' in lib/vscode and lib/vscode/extensions and builds
    # native modules with node-gyp. As root it needs unsafe-perm (read from the env var);
    # node-pty's postinstall runs 'npx node-gyp', which needs npm_config_yes=true without a TTY.
    export TMPDIR="$TMP_DIR" npm_config_unsafe_perm=true npm_config_yes=true
    npm ci --no-audit --no-fund
  )
  test -x "$VSCODE_DIR/node_modules/@vscode/ripgrep/bin/rg"
  touch "$HERE/code-server/node_modules/.causeway-e2e-installed"
fi

# 3. The repo's dev dependencies used by run.sh (esbuild + vsce for 'npm run package',
#    playwright-core for the scenarios; Chromium itself comes from apt, never downloaded).
if [ -f "$ROOT/node_modules/playwright-core/package.json" ] && [ -x "$ROOT/node_modules/.bin/vsce" ] \
   && [ -x "$ROOT/node_modules/.bin/esbuild" ]; then
  echo "repo dev dependencies: present"
else
  echo "repo dev dependencies: npm ci"
  (cd "$ROOT" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi

# XDG_* keep code-server from writing ~/.config/code-server and ~/.local/share/code-server
mkdir -p "$HERE/.cache/xdg"
v="$(XDG_CONFIG_HOME="$HERE/.cache/xdg" XDG_DATA_HOME="$HERE/.cache/xdg" \
  "$HERE/code-server/node_modules/.bin/code-server" --config "$HERE/.cache/xdg/config.yaml" --version 2>/dev/null | tail -1)"
echo "setup done in $(( $(date +%s) - t0 )) s: code-server $v; $(/usr/bin/chromium --version 2>/dev/null)"
