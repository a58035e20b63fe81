#!/usr/bin/env bash
# Records the go-vcr cassettes of this folder (see record.go): one fresh `turnsim
# serve --scenario ../script.json` per file, so each file is a function of the script
# (`mixed`: the Messages, Chat and Responses loops in one cassette, one server).
#   apt-get install golang-go golang-github-dnaeon-go-vcr-dev
#   TURNSIM_BIN=/path/to/turnsim bash record.sh [messages chat responses mixed]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TURNSIM_BIN:-turnsim}
log=$(mktemp)
for api in ${@:-messages chat responses mixed}; do
  "$bin" serve --scenario "$here/../script.json" --port 0 >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q listening "$log" && break; sleep 0.1; done
  base=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1)
  (cd "$here" && GO111MODULE=off GOPATH=/usr/share/gocode go run record.go "$base" "$api")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  sed -n '/^#/p' "$log"
done
rm -f "$log"
