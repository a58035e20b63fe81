#!/usr/bin/env bash
# Records the Codex rollouts of this folder named codex-VERSION-corpus-*.jsonl: the real
# Codex CLI of each version, installed from npm into a prefix outside the repository
# (npm install --prefix /work/clients/codex-V @openai/codex@V), run offline with an
# isolated HOME against `turnsim serve` playing a two-step script: one shell call
# (Codex's own shell tool of that version), then a closing text. Two runs a version:
#   toolcall     the call runs and is answered; one turn.
#   kill-resume  the call sleeps; Codex gets SIGTERM 4 s into it; then
#                `codex exec resume SESSION_ID` continues the same session.
# The rollout Codex wrote (HOME/.codex/sessions/...) is then made small by ../trim.py.
#   TURNSIM_BIN=/path/to/turnsim CLIENTS=/work/clients bash record-codex.sh 0.60.1 0.128.0 0.171.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TURNSIM_BIN:-turnsim}
clients=${CLIENTS:-/work/clients}
scratch=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "scratch: $scratch" || trap 'rm -rf "$scratch"' EXIT

script() { # VERSION COMMAND -> a serve script calling that version's shell tool
  local input
  case $1 in
    0.60.*) input=$(python3 -c 'import json,sys; print(json.dumps({"command": ["bash", "-lc", sys.argv[1]]}))' "$2")
            name=shell ;;
    *) input=$(python3 -c 'import json,sys; print(json.dumps({"cmd": sys.argv[1]}))' "$2")
       name=exec_command ;;
  esac
  cat <<JSON
{"format": "turnsim-serve-script", "version": 1, "seed": 0, "faults": false,
 "steps": [
   {"kind": "reply", "text": "Running it.", "tool_calls": [{"name": "$name", "input": $input}], "stop": "tool_use"},
   {"kind": "reply", "text": "Done.", "stop": "end_turn"}
 ]}
JSON
}

# ARGS (`resume ID`) follow exec's own flags: Codex 0.60 refuses them after it.
codex_run() { # VERSION HOME BASE ARGS... (runs in the background; pid in $cpid)
  local v=$1 h=$2 base=$3; shift 3
  (cd "$h/work" && HOME=$h OPENAI_API_KEY=dummy exec "$clients/codex-$v/node_modules/.bin/codex" exec \
    -c 'model="gpt-5"' -c 'model_provider="turnsim"' \
    -c "model_providers.turnsim={name=\"turnsim\",base_url=\"$base/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=0}" \
    --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --json "$@" "${PROMPT}" </dev/null >>"$h/out.jsonl" 2>&1) &
  cpid=$!
}

for v in "$@"; do
  tag=$v
  for run in toolcall kill-resume; do
    h=$scratch/$v-$run
    mkdir -p "$h/work"
    if [ $run = toolcall ]; then script "$v" "echo corpus-tool-ran" >"$h/script.json"
    else script "$v" "sleep 30; echo slept" >"$h/script.json"; fi
    "$bin" serve --scenario "$h/script.json" --record "$h/rec" --workdir "$h/wd" --port 0 >"$h/serve.log" 2>&1 &
    spid=$!
    for _ in $(seq 300); do grep -q listening "$h/serve.log" && break; sleep 0.1; done
    base=$(grep -o 'http://127.0.0.1:[0-9]*' "$h/serve.log" | head -1)
    PROMPT="Run the check"
    codex_run "$v" "$h" "$base"
    if [ $run = kill-resume ]; then
      for _ in $(seq 600); do grep -q '^#0' "$h/serve.log" && break; sleep 0.1; done
      sleep 4
      kill -TERM "$cpid" 2>/dev/null || true
      wait "$cpid" || true
      PROMPT="Continue"
      # The session by id: Codex 0.60 reads `resume --last PROMPT` as a session id.
      first=$(find "$h/.codex/sessions" -name 'rollout-*.jsonl' | head -1)
      id=$(basename "$first" .jsonl | grep -o '[0-9a-f-]\{36\}$')
      codex_run "$v" "$h" "$base" resume "$id"
    fi
    wait "$cpid" || true
    kill "$spid"; wait "$spid" 2>/dev/null || true
    rollout=$(find "$h/.codex/sessions" -name 'rollout-*.jsonl' | head -1)
    python3 "$here/../trim.py" "$rollout" "$here/codex-$tag-corpus-$run.jsonl" "$h"
    sed -n "/^#/p" "$h/serve.log"
    echo "codex $v $run: $(grep -c '^#' "$h/serve.log") request(s), $(wc -c <"$here/codex-$tag-corpus-$run.jsonl") bytes"
  done
done
