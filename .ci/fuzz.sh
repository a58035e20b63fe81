#!/usr/bin/env bash
# Runs every fuzz target for a short fixed time from its committed seeds; a crash
# fails the script. Stable toolchain: `--sanitizer none` (no code the targets reach is
# `unsafe`, and the uninstrumented build runs several times more execs/s than
# AddressSanitizer).
#
#   FUZZ_SECONDS   seconds per target (default 20)
#   FUZZ_TARGETS   space-separated targets to run (default: all of `cargo fuzz list`)
#   FUZZ_DEV       set (to anything): build the targets unoptimised (`--dev`), as CI's
#                  smoke run does: the instrumented release build of the fuzz crate is a
#                  second full build of the workspace (2 min 47 s on a new machine, 48 s
#                  unoptimised), and a few seconds per target need build speed more than
#                  exec speed; debug assertions and overflow checks stay on either way.
#
# The committed seeds in fuzz/seeds/<target> are copied into a scratch corpus
# (target/fuzz-corpus/<target>) so the fuzzer's additions never touch them; crash
# inputs land in fuzz/artifacts/<target>/ (and sim_decisions finds also as a
# scenario file there, replayed with `turnsim replay`).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-20}"

# cargo-fuzz, when the machine has none, goes under target/ (ignored by git), never
# into ~/.cargo: CI installs nothing outside the checkout's target/ or a venv.
if ! cargo fuzz --version >/dev/null 2>&1; then
    tools="$(pwd)/target/tools"
    if [ ! -x "$tools/bin/cargo-fuzz" ]; then
        cargo install cargo-fuzz --locked --root "$tools"
    fi
    export PATH="$tools/bin:$PATH"
fi

targets="${FUZZ_TARGETS:-$(cd fuzz && cargo fuzz list)}"
failed=()
for t in $targets; do
    corpus="target/fuzz-corpus/$t"
    rm -rf "$corpus"
    mkdir -p "$corpus"
    cp -R "fuzz/seeds/$t/." "$corpus/"
    # sim_decisions is one whole simulated run per exec: run without the entropic
    # schedule, whose per-exec bookkeeping grows with the ~30k features a run touches
    # (README, "Speed of sim_decisions"). Long runs also build it with
    # `--no-trace-compares`; this short smoke run does not, so the fuzz crate is built
    # once, with one set of flags, for every target.
    run_flags=()
    if [ "$t" = sim_decisions ]; then
        run_flags=(-entropic=0)
    fi
    echo "== fuzz $t for ${seconds}s"
    if ! cargo fuzz run ${FUZZ_DEV:+--dev} --sanitizer none "$t" "$corpus" -- \
        -max_total_time="$seconds" -print_final_stats=1 "${run_flags[@]}"; then
        echo "FUZZ CRASH in $t: see fuzz/artifacts/$t/"
        failed+=("$t")
    fi
done

# cargo-fuzz makes fuzz/artifacts/<target>/ before every run; only a crash puts
# anything in it. Empty ones are removed so a clean run leaves nothing behind but
# build output (fuzz/target/) and the scratch corpora (target/fuzz-corpus/).
if [ -d fuzz/artifacts ]; then
    find fuzz/artifacts -depth -type d -empty -delete
fi

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: ${#failed[@]} target(s) crashed: ${failed[*]}"
    exit 1
fi
echo "fuzz: every target ran ${seconds}s without a crash"
