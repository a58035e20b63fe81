#!/usr/bin/env bash
# A real browser opens a timeline picture (issue 31): headless Chromium from the
# distribution's packages loads the picture of a canary's replay, offline, takes a
# screenshot, and this fails if the console shows anything (a script error, a load
# the page's Content-Security-Policy refused) or no screenshot was written.
#
# Usage: bash .ci/timeline-browser.sh [SCREENSHOT.png]
# Installs chromium only when missing; builds turnsim (release) if needed. Keeps
# its scratch under a temp directory it removes; the screenshot goes to the path
# given (default: the temp directory, removed).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

cargo build --release -p turnsim --quiet
turnsim="${CARGO_TARGET_DIR:-target}/release/turnsim"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
shot="${1:-$tmp/timeline.png}"
picture="$tmp/timeline.html"

# A canary replays its failure: exit 1 is the expected reproduction.
code=0
"$turnsim" replay scenarios/canary-marker_twice.json --html "$picture" >"$tmp/replay.out" || code=$?
if [ "$code" -ne 1 ] || [ ! -s "$picture" ]; then
    cat "$tmp/replay.out" >&2
    echo "timeline-browser: the replay did not write its picture (exit $code)" >&2
    exit 1
fi

rm -f "$shot"
timeout 120 chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$tmp/profile" \
    --enable-logging=stderr --v=0 --hide-scrollbars --window-size=1400,900 \
    --screenshot="$shot" "file://$picture" >"$tmp/chromium.log" 2>&1 || {
    cat "$tmp/chromium.log" >&2
    echo "timeline-browser: chromium failed" >&2
    exit 1
}
if grep -q ':CONSOLE' "$tmp/chromium.log"; then
    grep ':CONSOLE' "$tmp/chromium.log" >&2
    echo "timeline-browser: the picture wrote to the browser's console" >&2
    exit 1
fi
if [ ! -s "$shot" ]; then
    cat "$tmp/chromium.log" >&2
    echo "timeline-browser: no screenshot" >&2
    exit 1
fi
echo "timeline-browser: $picture loaded without a console message; screenshot $(wc -c <"$shot") bytes"
