#!/bin/bash
# Issue 30's overhead ratio in one command: total instructions of a run against the
# instructions spent inside the engine's entry points, both counted by callgrind on the
# same command, so the ratio does not depend on the machine's load or clock. The second
# profile collects only inside the outermost engine calls the simulator makes (live
# inputs, the twin's replays, restores after crashes and of hostile logs, the engine
# state that `stale_noop` compares); everything outside them is the simulator's own
# (the world, the provider, the checkers, the digest). benches/README.md quotes it.
#
#   TURNSIM_BIN=target/release/turnsim SEEDS=0..200 bash scripts/overhead.sh
#
# Prints the run's digest, the two counts, the simulator's own count, the ratio, and
# instructions per event of each. Exits 2 with a message if valgrind or the binary is
# missing, or if the two runs disagree on the digest (they are the same run).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TURNSIM_BIN:-$root/target/release/turnsim}
seeds=${SEEDS:-0..200}
if ! command -v valgrind >/dev/null; then
    echo "overhead.sh: valgrind is not installed (callgrind counts the instructions)" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "overhead.sh: no binary at $bin (cargo build --release -p turnsim, or set TURNSIM_BIN)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The entry points: a toggle on a function called inside another toggled one would
# switch collection off again, so only the outermost ones are named (`Engine::replay`
# is the trait's loop over `handle`, inside the first).
toggles=(
    '--toggle-collect=<turnsim_core::session::Session as turnsim::engine::Engine>::handle'
    '--toggle-collect=<turnsim_core::session::Session as turnsim::engine::Engine>::state_bytes'
    '--toggle-collect=<turnsim::engine::Reference as turnsim::engine::EngineFactory>::restore'
    '--toggle-collect=<turnsim::engine::Reference as turnsim::engine::EngineFactory>::create'
)

collected() { sed -nE 's/.*Collected : ([0-9]+).*/\1/p' "$1" | tail -1; }
field() { sed -nE "s/^ *$1 +([^ ]+).*/\1/p" "$2" | head -1; }

valgrind --tool=callgrind --callgrind-out-file="$work/all.out" \
    "$bin" run --seeds "$seeds" --jobs 1 --quiet >"$work/all.txt" 2>"$work/all.err"
valgrind --tool=callgrind --callgrind-out-file="$work/engine.out" --collect-atstart=no \
    "${toggles[@]}" "$bin" run --seeds "$seeds" --jobs 1 --quiet \
    >"$work/engine.txt" 2>"$work/engine.err"

total=$(collected "$work/all.err")
engine=$(collected "$work/engine.err")
digest=$(field digest "$work/all.txt")
digest2=$(field digest "$work/engine.txt")
events=$(field events "$work/all.txt")
if [ -z "$total" ] || [ -z "$engine" ] || [ -z "$digest" ]; then
    echo "overhead.sh: could not read callgrind's counts or the run's digest; output in:" >&2
    cat "$work/all.err" "$work/all.txt" >&2
    exit 2
fi
if [ "$digest" != "$digest2" ]; then
    echo "overhead.sh: the two runs gave different digests ($digest, $digest2)" >&2
    exit 2
fi
if [ "$engine" -eq 0 ]; then
    echo "overhead.sh: nothing was collected inside the engine's entry points (were they renamed?)" >&2
    exit 2
fi
awk -v t="$total" -v e="$engine" -v n="${events:-0}" -v s="$seeds" -v d="$digest" 'BEGIN {
    printf "seeds %s, digest %s\n", s, d
    printf "total        %12d\n", t
    printf "engine calls %12d\n", e
    printf "simulator    %12d\n", t - e
    printf "ratio total / engine calls: %.3fx (issue 30 asks <= 1.5x)\n", t / e
    if (n > 0) printf "per event (%d events): total %.0f, engine %.0f, simulator %.0f\n", n, t / n, e / n, (t - e) / n
}'
