#!/usr/bin/env bash
# Records every vcrpy cassette of this folder again (see record.py): one fresh
# `turnsim serve` per cassette, playing script.json (no faults), so each file is a function of the
# script alone. The SDKs are installed pinned, under target/; the server's own
# recording of each run is kept under target/ too, to compare its live verdicts with
# what `turnsim check` says of the cassette.
#   TURNSIM_BIN=/path/to/turnsim bash sim/tests/data/cassettes/record.sh [NAME...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
bin=${TURNSIM_BIN:-$root/target/release/turnsim}
work=$root/target/cassettes
venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt" >&2
fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  mapfile -t names < <("$venv/bin/python" -c "import sys; sys.path.insert(0, '$here'); import record; print('\n'.join(record.RUNS))")
fi
for name in "${names[@]}"; do
  rm -rf "$work/serve-$name"
  log=$work/serve-$name.log
  "$bin" serve --scenario "$here/script.json" --record "$work/serve-$name" --port 0 >"$log" 2>&1 &
  pid=$!
  # The server goes with this script, even when a recording fails.
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 300); do grep -q listening "$log" && break; sleep 0.1; done
  base=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1)
  (cd "$here" && rm -f "$name.yaml" "$name.json" && "$venv/bin/python" record.py "$base" "$name")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$name: $(grep -c '^#' "$log") request(s)"
done
