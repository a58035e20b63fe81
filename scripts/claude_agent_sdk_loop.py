#!/usr/bin/env python3
"""One turn of a Claude Agent SDK program, for `turnsim drive --client claude-agent-sdk`.

Usage: claude_agent_sdk_loop.py BASE_URL [--resume] --prompt TEXT

The smallest program a user of `claude-agent-sdk` (PyPI) writes: `query()` with a
prompt and `ClaudeAgentOptions`, iterating the messages to the result. The SDK starts
its bundled Claude Code underneath and talks to it over stdin/stdout; Claude Code
talks to BASE_URL (a `turnsim serve` on loopback) with a dummy key, and runs its own
Bash tool without asking (`bypassPermissions`, as a CI script would). Thinking is
Claude Code's default (on, `adaptive`), as in a program that does not mention it;
`TURNSIM_SDK_THINKING=disabled` in the environment turns it off, which is how the
batch of docs/real-clients.md made before serve could think was run. The session
is Claude Code's own, under HOME; `--resume` continues the working directory's most
recent one (`continue_conversation`), which is how drive resumes. Each message is
printed as one JSON line, so a run's stdout shows what the program saw.
"""

import argparse
import asyncio
import dataclasses
import json
import os
import sys

from claude_agent_sdk import ClaudeAgentOptions, query


def as_json(message) -> str:
    body = dataclasses.asdict(message) if dataclasses.is_dataclass(message) else repr(message)
    return json.dumps({"type": type(message).__name__, "message": body}, default=repr)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("base_url")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--prompt", required=True)
    args = ap.parse_args()
    options = ClaudeAgentOptions(
        cwd=os.getcwd(),
        permission_mode="bypassPermissions",
        continue_conversation=args.resume,
        # The model id is only echoed by the server; no network lookup is made for it.
        model="claude-sonnet-4-5",
        env={"ANTHROPIC_BASE_URL": args.base_url, "ANTHROPIC_API_KEY": "dummy"},
    )
    # Before serve streamed signed thinking blocks, a client with thinking on got its
    # own tool loop refused (the loop's assistant turn must open with its thinking), so
    # the first batches turned it off; the variable keeps that run reproducible.
    if os.environ.get("TURNSIM_SDK_THINKING") == "disabled":
        options.thinking = {"type": "disabled"}
    async for message in query(prompt=args.prompt, options=options):
        print(as_json(message), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
