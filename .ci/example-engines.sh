#!/usr/bin/env bash
# The two example engines of other designs (issue 26): each correct engine must pass
# EXAMPLE_SEEDS (default 0..2000) and a determinism check, judged with the engine's
# profile file when the list names one (its wording only: no generic rule changes), and
# each planted bug that adapters/example-bugs.json lists with a checker must be found
# by exactly that checker (turnsim exits 1 and writes a scenario). A bug listed with
# a null checker (not found yet) is run too and reported, never red, so the day
# turnsim finds it the output says to update the list. A correct-engine failure is
# red unless its invariant is a known false positive of turnsim listed for that
# engine in the same file (documented in adapters/DESIGNS.md): those are turnsim's
# to fix, and hiding them in the engine would defeat the point. Writes only under
# target/.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { echo "example-engines: python3 is needed" >&2; exit 1; }
command -v node >/dev/null || { echo "example-engines: node is needed" >&2; exit 1; }
# TURNSIM_BIN names a turnsim already built (CI passes the one its tests built);
# otherwise it is built (release).
if [ -z "${TURNSIM_BIN:-}" ]; then
    cargo build --release -p turnsim --quiet
    TURNSIM_BIN="${CARGO_TARGET_DIR:-target}/release/turnsim"
fi
export TURNSIM_BIN
export EXAMPLE_SEEDS="${EXAMPLE_SEEDS:-0..2000}"
export EXAMPLE_DET_SEEDS="${EXAMPLE_DET_SEEDS:-0..200}"
export EXAMPLE_OUT="${CARGO_TARGET_DIR:-target}/example-engines"

exec python3 - <<'PY'
import json, os, shutil, subprocess, sys

bin_, seeds, det_seeds, root = (os.environ[k] for k in ("TURNSIM_BIN", "EXAMPLE_SEEDS", "EXAMPLE_DET_SEEDS", "EXAMPLE_OUT"))
spec = json.load(open("adapters/example-bugs.json"))
red = []


def turnsim(cmd, out, seed_range, env=None, extra=(), conventions=None):
    shutil.rmtree(out, ignore_errors=True)
    args = [bin_, "run", "--engine-cmd", cmd, "--seeds", seed_range, "--jobs", "2", "--quiet", "--out", out, *extra]
    if conventions:
        args += ["--conventions", conventions]
    if env:
        args += ["--engine-env", env]
    p = subprocess.run(args, capture_output=True, text=True)
    found = []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if name.endswith(".json"):
            s = json.load(open(os.path.join(out, name)))
            found.append((s["seed"], s["expect"].get("invariant"), s.get("description", "")))
    found.sort()
    return p.returncode, found, p.stdout + p.stderr


for name, engine in spec["engines"].items():
    cmd = engine["cmd"]
    profile = engine.get("conventions")
    known = {fp["invariant"] for fp in engine.get("known_false_positives", [])}
    rc, found, log = turnsim(cmd, f"{root}/{name}", seeds, extra=["--max-failures", "100000"], conventions=profile)
    unexpected = [f for f in found if f[1] not in known]
    if rc not in (0, 1) or (rc == 1 and not found) or unexpected:
        red.append(f"{name}: correct engine on {seeds}: exit {rc}, findings {unexpected or found}")
        print(log[-3000:], file=sys.stderr)
    else:
        by = {}
        for seed, inv, _ in found:
            by.setdefault(inv, []).append(seed)
        fps = "; ".join(f"{inv} at {len(s)} seed(s), first {s[0]} (known false positive)" for inv, s in sorted(by.items()))
        print(f"example-engines: {name}: {seeds} pass" + (f" apart from {fps}" if fps else ""))
    rc, found, log = turnsim(cmd, f"{root}/{name}-det", det_seeds, extra=["--check-determinism", "--max-failures", "100000"], conventions=profile)
    if rc not in (0, 1) or any(f[1] not in known for f in found):
        red.append(f"{name}: determinism on {det_seeds}: exit {rc}, findings {found}")
        print(log[-3000:], file=sys.stderr)
    else:
        print(f"example-engines: {name}: deterministic on {det_seeds}")
    for bug in engine["bugs"]:
        want = bug["checker"]
        # Known false positives are skipped here: they would fill the run before the
        # planted bug's own finding (a finding is a finding of the bug or nothing).
        skip = sorted(known - {want}) if want else sorted(known)
        extra = ["--stop-after", "3"] + (["--skip", ",".join(skip)] if skip else [])
        # A bug rarer than the range CI gives the correct engine names its own range.
        bug_seeds = bug.get("seeds", seeds)
        rc, found, log = turnsim(cmd, f"{root}/{name}-{bug['bug']}", bug_seeds, env=f"TURNSIM_EXAMPLE_BUG={bug['bug']}", extra=extra, conventions=profile)
        first = found[0] if found else None
        if want is None:
            print(f"example-engines: {name}/{bug['bug']}: not expected to be found yet; "
                  + (f"now found at seed {first[0]} by {first[1]}: update adapters/example-bugs.json" if first else "not found"))
            if rc not in (0, 1):
                red.append(f"{name}/{bug['bug']}: exit {rc}")
                print(log[-3000:], file=sys.stderr)
            continue
        hit = [f for f in found if f[1] == want]
        if rc != 1 or not hit:
            red.append(f"{name}/{bug['bug']}: expected {want}, got exit {rc} and {found}")
            print(log[-3000:], file=sys.stderr)
        else:
            print(f"example-engines: {name}/{bug['bug']}: found by {want} at seed {hit[0][0]}")

for r in red:
    print(f"example-engines: RED: {r}", file=sys.stderr)
sys.exit(1 if red else 0)
PY
