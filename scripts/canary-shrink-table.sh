#!/bin/bash
# The CLI shrink table of docs/invariants.md ("Shrinking every canary through the
# CLI"): for every canary of `Bug::ALL` (read from sim/src/canary/bug.rs), the first
# failing seed of `turnsim run --engine NAME --seeds 0..10000` (whatever checker saw
# it) and the steps `turnsim shrink` (its defaults: 20,000 replays, SECS seconds)
# leaves of it, with the replays it spent. Prints a Markdown table; "time" says the time
# budget ran out first, "replays" that the replay budget did. `--stop-after 1` stops
# starting seeds after the first failure; seeds start in order and every started seed
# finishes, so the smallest failing seed saved is the first failing seed of the range.
#
#   TURNSIM_BIN=target/release/turnsim SECS=10 bash scripts/canary-shrink-table.sh [OUT]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TURNSIM_BIN:-$root/target/release/turnsim}
secs=${SECS:-10}
out=${1:-/tmp/canary-shrink-table}
mkdir -p "$out"
names=$(awk '/pub fn name\(self\)/{on=1} on&&/^    }/{on=0} on' "$root/sim/src/canary/bug.rs" |
    grep -oE '=> "[a-z_]+"' | sed -E 's/=> "([a-z_]+)"/\1/')
echo "| canary | first seed | checker | steps before | steps after shrink | replays |"
echo "|---|---|---|---|---|---|"
for n in $names; do
    dir="$out/$n"
    rm -rf "$dir"
    "$bin" run --engine "$n" --seeds 0..10000 --jobs 2 --quiet --stop-after 1 --out "$dir" >/dev/null 2>&1
    f=$(ls "$dir"/seed-*.json 2>/dev/null | grep -v '\.min\.' |
        sed -E 's#.*/seed-([0-9]+)-.*#\1 &#' | sort -n | head -1 | cut -d' ' -f2)
    if [ -z "$f" ]; then
        echo "| \`$n\` | none in 0..10000 | | | | |"
        continue
    fi
    seed=$(basename "$f" | sed -E 's/seed-([0-9]+)-.*/\1/')
    inv=$(basename "$f" .json | sed -E 's/seed-[0-9]+-//')
    said=$("$bin" shrink --seconds "$secs" "$f" 2>&1)
    line=$(echo "$said" | grep -E '^shrunk ')
    before=$(echo "$line" | sed -E 's/.*steps ([0-9]+) -> ([0-9]+).*/\1/')
    after=$(echo "$line" | sed -E 's/.*steps ([0-9]+) -> ([0-9]+).*/\2/')
    replays=$(echo "$line" | sed -E 's/.*\(([0-9]+) replays.*/\1/')
    if echo "$said" | grep -q "time budget ran out"; then after="$after (time)"; fi
    if echo "$said" | grep -q "replay budget ran out"; then after="$after (replays)"; fi
    echo "| \`$n\` | $seed | \`$inv\` | $before | $after | $replays |"
done
