#!/usr/bin/env bash
# Real agent frameworks inside the simulator (issue 28, docs/frameworks.md). Every
# directory adapters/frameworks/<fw>/ holds one adapter with:
#   setup.sh       installs the framework's pinned dependencies under target/ (only what
#                  is missing) and prints the engine command (line 1) and the
#                  interpreter of its hand checks (line 2);
#   expected.json  the known findings, each documented with its verdict ("seeds" narrows
#                  an entry to those seeds, "says" to failures whose description holds
#                  that text: a finding on many seeds stays apart from other failures
#                  of its invariant);
#   handcheck/     optional scripts that show a finding with the framework alone and
#                  exit 0 only while the framework still behaves so.
# Each adapter runs seeds 0..200 under --check-determinism and 200..300 plainly; every
# failing seed must be a known finding. A new kind of failure, a nondeterminism or an
# engine panic is red. Writes only under target/.
set -euo pipefail
cd "$(dirname "$0")/.."

DET_SEEDS="${FRAMEWORK_DET_SEEDS:-0..200}"
MORE_SEEDS="${FRAMEWORK_MORE_SEEDS:-200..300}"
ONLY="${FRAMEWORK:-}"
# A loaded machine can take longer than the 20 s default for an interpreter to import
# a framework and say hello (or to answer a request): FRAMEWORK_ENGINE_TIMEOUT_MS raises it.
TIMEOUT_FLAGS=()
if [ -n "${FRAMEWORK_ENGINE_TIMEOUT_MS:-}" ]; then
    TIMEOUT_FLAGS=(--engine-timeout-ms "$FRAMEWORK_ENGINE_TIMEOUT_MS")
fi

# TURNSIM_BIN names a turnsim already built (an adapter's author iterating); CI builds.
bin="${TURNSIM_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --release -p turnsim --quiet
    bin="${CARGO_TARGET_DIR:-target}/release/turnsim"
fi

check() { # framework, out dir: every failure file must be an expected finding
    python3 - "$1" "$2" <<'PY'
import json, os, sys
fw, out = sys.argv[1], sys.argv[2]
expected = json.load(open(f"adapters/frameworks/{fw}/expected.json"))["findings"]
bad = 0
found = {}
for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
    if not name.endswith(".json"):
        continue
    s = json.load(open(os.path.join(out, name)))
    inv, seed = s["expect"].get("invariant"), s["seed"]
    ok = any(
        e["invariant"] == inv and ("seeds" not in e or seed in e["seeds"]) and e.get("says", "") in s["description"]
        for e in expected
    )
    found.setdefault(inv, []).append(seed)
    if not ok:
        bad += 1
        print(f"frameworks: {fw}: seed {seed} fails {inv}, not a known finding: {s['description']}", file=sys.stderr)
for inv, seeds in sorted(found.items()):
    print(f"frameworks: {fw}: {inv}: {len(seeds)} seed(s), known" if bad == 0 else f"frameworks: {fw}: {inv}: seeds {seeds}")
sys.exit(1 if bad else 0)
PY
}

run_fw() { # name, engine command
    local name="$1" cmd="$2" out="target/fw-failures/$1"
    rm -rf "$out-det" "$out-more"
    set +e
    "$bin" run --engine-cmd "$cmd" --seeds "$DET_SEEDS" --jobs 2 --quiet --check-determinism --max-failures 100000 ${TIMEOUT_FLAGS[@]+"${TIMEOUT_FLAGS[@]}"} --out "$out-det"
    local drc=$?
    "$bin" run --engine-cmd "$cmd" --seeds "$MORE_SEEDS" --jobs 2 --quiet --max-failures 100000 ${TIMEOUT_FLAGS[@]+"${TIMEOUT_FLAGS[@]}"} --out "$out-more"
    local rc=$?
    set -e
    # 0 pass, 1 a correctness finding (judged below); anything else (liveness, panic,
    # nondeterminism, files) is red whatever the expected file says.
    for r in $drc $rc; do
        if [ "$r" -ne 0 ] && [ "$r" -ne 1 ]; then
            echo "frameworks: $name: turnsim exited $r (not a correctness finding)" >&2
            exit 1
        fi
    done
    check "$name" "$out-det"
    check "$name" "$out-more"
}

for dir in adapters/frameworks/*/; do
    name="$(basename "$dir")"
    if [ -n "$ONLY" ] && [ "$ONLY" != "$name" ]; then
        continue
    fi
    setup="$(bash "$dir/setup.sh")" || {
        echo "frameworks: $name: $dir/setup.sh failed (installing its pinned dependencies)" >&2
        exit 1
    }
    cmd="$(sed -n 1p <<<"$setup")"
    interp="$(sed -n 2p <<<"$setup")"
    run_fw "$name" "$cmd"
    # The hand checks stay true: each exits 0 only while the framework still behaves so.
    if [ -d "$dir/handcheck" ]; then
        for script in "$dir"/handcheck/*; do
            # A hand check that hangs is a failure with its name, not a stuck CI.
            timeout 300 $interp "$script" >/dev/null || {
                echo "frameworks: $script no longer shows its finding (or ran 300 s); update docs/frameworks.md and $dir/expected.json" >&2
                exit 1
            }
        done
    fi
done
echo "frameworks: all known"
