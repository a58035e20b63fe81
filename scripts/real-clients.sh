#!/usr/bin/env bash
# Drives the real npm clients (Claude Code, opencode) with `turnsim drive`, by hand:
# installs them into a scratch npm prefix (never globally), then runs each profile
# over a range of seeds, one run at a time. Results go to $OUT/<client>/ (one
# directory per run with report.json, repro.py for each finding, and summary.md /
# summary.json across runs); copy the findings into docs/real-clients.md after
# checking each by hand.
# Usage: scripts/real-clients.sh [SEEDS] (default 0..40: about 10 runs per signal
# class). Environment: PREFIX (npm prefix, default target/npm-clients), OUT
# (default target/real-clients), CLIENTS (default "claude-code opencode"),
# TOOL_MS (scripted tool duration, default 6000), JOBS (default 1); add
# claude-code-tui to CLIENTS for the interactive (pty) mode.
# Needs npm and network for the install only; the runs are offline (loopback
# server, isolated HOME).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS="${1:-0..40}"
PREFIX="${PREFIX:-$PWD/target/npm-clients}"
OUT="${OUT:-$PWD/target/real-clients}"
CLIENTS="${CLIENTS:-claude-code opencode}"
mkdir -p "$PREFIX" "$OUT"
packages=()
for client in $CLIENTS; do
    case "$client" in
        claude-code|claude-code-tui) packages+=(@anthropic-ai/claude-code) ;;
        opencode) packages+=(opencode-ai) ;;
        *) echo "unknown client $client" >&2; exit 2 ;;
    esac
done
npm install --prefix "$PREFIX" --no-fund --no-audit "${packages[@]}"
export PATH="$PREFIX/node_modules/.bin:$PATH"
cargo build --release -p turnsim
for client in $CLIENTS; do
    echo "== $client"
    # Exit 1 (findings) is the expected result here; 8 (environment) stops the script.
    code=0
    ./target/release/turnsim drive --client "$client" --seeds "$SEEDS" --jobs "${JOBS:-1}" \
        --tool-ms "${TOOL_MS:-6000}" --timeout 180 --rerun 1 --out "$OUT/$client" \
        | tee "$OUT/$client.txt" || code=$?
    if [ "$code" = 8 ]; then
        echo "$client: environment error (see above), not a client finding" >&2
        exit 8
    fi
done
