#!/usr/bin/env bash
# Real agent frameworks inside the simulator (issue 28): makes the venv under target/,
# installs each framework's pinned requirements, builds turnsim, runs each adapter for
# a few hundred seeds plus a determinism check, and fails unless every failing seed is
# a known finding listed in adapters/frameworks/expected.json (documented, with its
# verdict, in docs/frameworks.md). A new kind of failure, a nondeterminism or an engine
# panic is red. Writes only under target/.
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS="${FRAMEWORK_SEEDS:-0..300}"
DET_SEEDS="${FRAMEWORK_DET_SEEDS:-0..200}"
venv=target/fw-venv
if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
    -r adapters/frameworks/pydantic_ai/requirements.txt || {
    echo "frameworks: pip install of adapters/frameworks/pydantic_ai/requirements.txt failed" >&2
    exit 1
}
cargo build --release -p turnsim --quiet
bin="${CARGO_TARGET_DIR:-target}/release/turnsim"

check() { # framework, out dir: every failure file must be an expected finding
    "$venv/bin/python3" - "$1" "$2" <<'PY'
import json, os, sys
fw, out = sys.argv[1], sys.argv[2]
expected = json.load(open("adapters/frameworks/expected.json"))[fw]
bad = 0
found = {}
for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
    if not name.endswith(".json"):
        continue
    s = json.load(open(os.path.join(out, name)))
    inv, seed = s["expect"].get("invariant"), s["seed"]
    ok = any(e["invariant"] == inv and ("seeds" not in e or seed in e["seeds"]) for e in expected)
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
    rm -rf "$out" "$out-det"
    set +e
    "$bin" run --engine-cmd "$cmd" --seeds "$SEEDS" --jobs 2 --quiet --max-failures 100000 --out "$out"
    rc=$?
    "$bin" run --engine-cmd "$cmd" --seeds "$DET_SEEDS" --jobs 2 --quiet --check-determinism --max-failures 100000 --out "$out-det"
    drc=$?
    set -e
    # 0 pass, 1 a correctness finding (judged below); anything else (liveness, panic,
    # nondeterminism, files) is red whatever the expected file says.
    for r in $rc $drc; do
        if [ "$r" -ne 0 ] && [ "$r" -ne 1 ]; then
            echo "frameworks: $name: turnsim exited $r (not a correctness finding)" >&2
            exit 1
        fi
    done
    check "$name" "$out"
    check "$name" "$out-det"
}

run_fw pydantic_ai "$venv/bin/python3 adapters/frameworks/pydantic_ai/engine.py"
# The hand checks stay true: each exits 0 only while the framework still behaves so.
for script in adapters/frameworks/pydantic_ai/handcheck/*.py; do
    "$venv/bin/python3" "$script" >/dev/null || {
        echo "frameworks: $script no longer shows its finding; update docs/frameworks.md and expected.json" >&2
        exit 1
    }
done
echo "frameworks: all known"
