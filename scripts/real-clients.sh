#!/usr/bin/env bash
# Drives the real npm clients (Claude Code, opencode) with `turnsim drive`, by hand:
# installs them into a scratch npm prefix, then runs each profile. Results go to
# $OUT (default target/real-clients); copy the findings into docs/real-clients.md.
# Usage: scripts/real-clients.sh [RUNS] (default 20). Needs npm and network for the
# install only; the runs themselves are offline (loopback server, isolated HOME).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-20}"
PREFIX="${PREFIX:-$PWD/target/npm-clients}"
OUT="${OUT:-$PWD/target/real-clients}"
mkdir -p "$PREFIX" "$OUT"
npm install --prefix "$PREFIX" --no-fund --no-audit @anthropic-ai/claude-code opencode-ai
export PATH="$PREFIX/node_modules/.bin:$PATH"
cargo build --release -p turnsim
for client in claude-code opencode; do
    echo "== $client"
    ./target/release/turnsim drive --client "$client" --runs "$RUNS" --timeout 180 \
        --out "$OUT/$client" | tee "$OUT/$client.txt" || true
done
