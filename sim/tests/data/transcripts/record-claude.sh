#!/usr/bin/env bash
# Records the Claude Code logs of this folder named claude-code-2197-corpus-*.jsonl:
# the real Claude Code 2.1.197 (npm install --prefix /work/clients/claude
# @anthropic-ai/claude-code@2.1.197, outside the repository), headless, offline, with an
# isolated HOME, against one `turnsim serve` playing record-claude.json. In order:
#   main      `claude -p`: a Bash call answered, then a closing text;
#   fork      `claude -p --resume MAIN --fork-session`: a new session that copies main
#             and adds a turn;
#   agent     `claude -p`: an Agent (sub-agent) call; the sub-agent makes a Bash call;
#             its own log is subagents/agent-*.jsonl beside the session's;
#   compact   `claude -p --resume MAIN /compact`: main compacted.
# Each log is made small by ../trim.py.
#   TURNSIM_BIN=/path/to/turnsim CLAUDE=/work/clients/claude bash record-claude.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TURNSIM_BIN:-turnsim}
claude=${CLAUDE:-/work/clients/claude}/node_modules/.bin/claude
h=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "scratch: $h" || trap 'rm -rf "$h"' EXIT
mkdir -p "$h/work"
"$bin" serve --scenario "$here/record-claude.json" --record "$h/rec" --workdir "$h/wd" --port 0 >"$h/serve.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q listening "$h/serve.log" && break; sleep 0.1; done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$h/serve.log" | head -1)

cc() { # OUT ARGS...: one headless run; prints its session id
  local out=$1; shift
  (cd "$h/work" && IS_SANDBOX=1 HOME=$h ANTHROPIC_BASE_URL=$base ANTHROPIC_API_KEY=dummy DISABLE_AUTOUPDATER=1 \
    timeout 300 "$claude" "$@" --dangerously-skip-permissions --output-format stream-json --verbose \
    </dev/null >"$h/$out.out" 2>&1) || true
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    try: d = json.loads(l)
    except ValueError: continue
    if d.get("session_id"): print(d["session_id"]); break' "$h/$out.out"
}

main=$(cc main -p "Run the check")
fork=$(cc fork -p --resume "$main" --fork-session "And once more?")
agent=$(cc agent -p "Ask a helper to run the check")
cc compact -p --resume "$main" "/compact" >/dev/null
kill $spid; wait $spid 2>/dev/null || true
sed -n '/^#/p' "$h/serve.log"

proj=$(dirname "$(find "$h/.claude/projects" -name "$main.jsonl")")
python3 "$here/../trim.py" "$proj/$main.jsonl" "$here/claude-code-2197-corpus-main-compacted.jsonl" "$h"
python3 "$here/../trim.py" "$proj/$fork.jsonl" "$here/claude-code-2197-corpus-fork.jsonl" "$h"
python3 "$here/../trim.py" "$proj/$agent.jsonl" "$here/claude-code-2197-corpus-agent-main.jsonl" "$h"
sub=$(find "$proj/$agent" -name 'agent-*.jsonl' | head -1)
python3 "$here/../trim.py" "$sub" "$here/claude-code-2197-corpus-agent-sub.jsonl" "$h"
ls -la "$here"/claude-code-2197-corpus-*
