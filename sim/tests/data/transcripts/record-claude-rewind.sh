#!/usr/bin/env bash
# Records claude-code-2197-corpus-rewind-compacted.jsonl: the real Claude Code 2.1.197
# (npm install --prefix DIR @anthropic-ai/claude-code@2.1.197, outside the repository),
# headless, offline, with an isolated HOME, against one `turnsim serve` playing
# record-claude-rewind.json, all in one session file:
#   `claude -p`                          a Bash call answered, then a closing text;
#   `--resume S`                         a second prompt and its reply;
#   `--resume S --resume-session-at U`   a rewind: U is the first turn's closing reply,
#                                        so the new prompt replaces the second one (a
#                                        request as long as the one before, its last
#                                        prompt replaced);
#   `--resume S /compact`                a first compaction;
#   `--resume S`                         a Bash call answered after it;
#   `--resume S /compact`                a second compaction;
#   `--resume S`                         one more prompt and reply.
# The serve recording is kept in $OUT_RECORD when set (it is judged by `turnsim check
# DIR`). The log is made small by ../trim.py.
#   TURNSIM_BIN=/path/to/turnsim CLAUDE=DIR bash record-claude-rewind.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TURNSIM_BIN:-turnsim}
claude=${CLAUDE:-/work/clients/claude}/node_modules/.bin/claude
h=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "scratch: $h" || trap 'rm -rf "$h"' EXIT
mkdir -p "$h/work"
"$bin" serve --scenario "$here/record-claude-rewind.json" --record "$h/rec" --workdir "$h/wd" --port 0 >"$h/serve.log" 2>&1 &
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

s=$(cc first -p "Run the check")
log=$(find "$h/.claude/projects" -name "$s.jsonl")
# The first turn's closing reply: the last assistant entry written so far.
at=$(python3 -c 'import json,sys
last = None
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("type") == "assistant": last = d["uuid"]
print(last)' "$log")
cc second -p --resume "$s" "And once more?" >/dev/null
cc rewind -p --resume "$s" --resume-session-at "$at" "Something else?" >/dev/null
cc compact1 -p --resume "$s" "/compact" >/dev/null
cc again -p --resume "$s" "Run it again" >/dev/null
cc compact2 -p --resume "$s" "/compact" >/dev/null
cc last -p --resume "$s" "Last one?" >/dev/null
kill $spid; wait $spid 2>/dev/null || true
sed -n '/^#/p' "$h/serve.log"
[ -n "${OUT_RECORD:-}" ] && rm -rf "$OUT_RECORD" && cp -r "$h/rec" "$OUT_RECORD"
python3 "$here/../trim.py" "$log" "$here/claude-code-2197-corpus-rewind-compacted.jsonl" "$h"
ls -la "$here"/claude-code-2197-corpus-rewind-compacted.jsonl
