#!/usr/bin/env bash
# A real browser opens a timeline picture (issue 31): headless Chromium, unpacked
# under target/browser/ by .ci/chromium-in-target.sh (never installed into the
# system), loads the picture of a canary's replay offline. This fails when
#   - the console shows anything (a script error, a load the page's
#     Content-Security-Policy refused, a log line): the page is meant to be silent;
#   - the screenshot is missing or shows no drawing (.ci/screenshot-check.py: many
#     colours, and the violation's red mark is there);
#   - the page's script did not run: loaded with #req-1, it must open that request.
# The structural checks (the SVG parses, lanes and marks are present) are Rust tests;
# this is the part only a browser can say.
#
# Usage: bash .ci/timeline-browser.sh [SCREENSHOT.png]
# TURNSIM_BIN names a turnsim already built; otherwise it is built (release). Writes
# only under target/: the browser in target/browser/, the picture, logs and the
# screenshot (unless a path is given) in target/timeline-browser/.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="$(bash .ci/chromium-in-target.sh)"

turnsim="${TURNSIM_BIN:-}"
if [ -z "$turnsim" ]; then
    cargo build --release -p turnsim --quiet
    turnsim="${CARGO_TARGET_DIR:-target}/release/turnsim"
fi

work="$(pwd)/target/timeline-browser"
rm -rf "$work"
mkdir -p "$work/home" "$work/tmp"
shot="${1:-$work/timeline.png}"
picture="$work/timeline.html"

# A canary replays its failure: exit 1 is the expected reproduction.
code=0
"$turnsim" replay scenarios/canary-marker_twice.json --html "$picture" >"$work/replay.out" || code=$?
if [ "$code" -ne 1 ] || [ ! -s "$picture" ]; then
    cat "$work/replay.out" >&2
    echo "timeline-browser: the replay did not write its picture (exit $code)" >&2
    exit 1
fi

browse() { # log name, then chromium's own arguments; stdout is the browser's
    local log="$work/$1.log"
    shift
    # HOME, the XDG directories and TMPDIR point into the scratch directory, so the
    # browser's caches, key store and temporary files stay under target/ too.
    HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache" \
        TMPDIR="$work/tmp" \
        timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --no-first-run --no-default-browser-check --user-data-dir="$work/profile" \
        --enable-logging=stderr --v=0 --hide-scrollbars "$@" 2>"$log" || {
        cat "$log" >&2
        echo "timeline-browser: chromium failed ($*)" >&2
        exit 1
    }
    # Chromium logs each console message as INFO:CONSOLE; none is expected.
    if grep -q ':CONSOLE' "$log"; then
        grep ':CONSOLE' "$log" >&2
        echo "timeline-browser: the picture wrote to the browser's console ($*)" >&2
        exit 1
    fi
}

rm -f "$shot"
browse screenshot --window-size=1400,900 --screenshot="$shot" "file://$picture" >/dev/null
if [ ! -s "$shot" ]; then
    cat "$work/screenshot.log" >&2
    echo "timeline-browser: no screenshot" >&2
    exit 1
fi
# #d00000 is the violation's colour (the alarm line and the violation's border).
python3 .ci/screenshot-check.py "$shot" d00000 200

browse dom --dump-dom "file://$picture#req-1" >"$work/dom.html"
if ! grep -q '<details id="req-1" open' "$work/dom.html" || grep -q '<details id="req-0" open' "$work/dom.html"; then
    grep -o '<details[^>]*>' "$work/dom.html" >&2 || true
    echo "timeline-browser: the page's script did not open request req-1 named in the URL" >&2
    exit 1
fi
echo "timeline-browser: $picture loaded twice without a console message; screenshot $shot ($(wc -c <"$shot") bytes); #req-1 opened its request"
