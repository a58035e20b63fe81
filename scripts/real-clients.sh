#!/usr/bin/env bash
# Drives the real clients with `turnsim drive`, by hand: installs them into a scratch
# npm prefix and a scratch virtual environment (never globally), then runs each
# profile over a range of seeds, one run at a time. Results go to $OUT/<client>/ (one
# directory per run with report.json, repro.py for each finding, and summary.md /
# summary.json across runs); copy the findings into docs/real-clients*.md after
# checking each by hand.
# Usage: scripts/real-clients.sh [SEEDS] (default 0..40: about 10 runs per signal
# class). Environment: PREFIX (npm prefix, default target/npm-clients), VENV (Python
# environment, default target/clients-venv), OUT (default target/real-clients),
# CLIENTS (default "claude-code opencode codex"), TOOL_MS (scripted tool duration,
# default 6000), JOBS (default 1). Every installable profile is known:
#   npm:  claude-code, claude-code-tui, opencode, codex, codex-tui
#   pip:  python-sdk (anthropic), pydantic-ai, openai-agents, openai-chat (openai)
# Needs the package registries for the install only; the runs are offline (loopback
# server, isolated HOME).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS="${1:-0..40}"
PREFIX="${PREFIX:-$PWD/target/npm-clients}"
VENV="${VENV:-$PWD/target/clients-venv}"
OUT="${OUT:-$PWD/target/real-clients}"
CLIENTS="${CLIENTS:-claude-code opencode codex}"
mkdir -p "$PREFIX" "$OUT"
packages=()
wheels=()
for client in $CLIENTS; do
    case "$client" in
        claude-code|claude-code-tui) packages+=(@anthropic-ai/claude-code) ;;
        opencode) packages+=(opencode-ai) ;;
        codex|codex-tui) packages+=(@openai/codex) ;;
        python-sdk) wheels+=(anthropic) ;;
        pydantic-ai) wheels+=(pydantic-ai) ;;
        openai-agents) wheels+=(openai-agents) ;;
        openai-chat) wheels+=(openai) ;;
        *) echo "unknown client $client; known: claude-code claude-code-tui opencode codex codex-tui python-sdk pydantic-ai openai-agents openai-chat" >&2; exit 2 ;;
    esac
done
if [ ${#packages[@]} -gt 0 ]; then
    npm install --prefix "$PREFIX" --no-fund --no-audit "${packages[@]}"
    export PATH="$PREFIX/node_modules/.bin:$PATH"
fi
if [ ${#wheels[@]} -gt 0 ]; then
    [ -x "$VENV/bin/python3" ] || python3 -m venv "$VENV"
    "$VENV/bin/python3" -m pip install --quiet --disable-pip-version-check "${wheels[@]}"
    # The Python profiles run `python3` from PATH: this environment's.
    export PATH="$VENV/bin:$PATH"
fi
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
