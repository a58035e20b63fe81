#!/usr/bin/env python3
"""One run of an `openai-agents` Agent with function tools, for `turnsim serve`.

Usage: openai_agents_loop.py BASE_URL --session FILE [--api responses|chat] [--prompt TEXT]

The Agent has a shell tool (`run_shell`, a `command` string) and a file tool; the
Runner talks to BASE_URL/v1 (a `turnsim serve` on loopback) with tracing off, so
nothing leaves the machine. The conversation lives in an `SQLiteSession` at FILE: a
second invocation with the same FILE resumes it (the Runner re-sends the stored
history and appends the new prompt), which is how `turnsim drive --client
openai-agents` resumes. Prints one JSON line with what happened.
"""

import argparse
import asyncio
import json
import subprocess
import sys

from openai import AsyncOpenAI
from agents import (
    Agent,
    Runner,
    SQLiteSession,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    set_tracing_disabled,
)


@function_tool
def run_shell(command: str) -> str:
    """Run a shell command and return its output."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or f"(no output, exit {done.returncode})"


@function_tool
def read_file(path: str) -> str:
    """Read a text file."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() or "(empty file)"
    except OSError as e:
        return f"cannot read: {e}"


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base_url")
    ap.add_argument("--session", required=True)
    ap.add_argument("--api", choices=["responses", "chat"], default="responses")
    ap.add_argument("--prompt", default="Run the checks, then summarise.")
    a = ap.parse_args()
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=a.base_url.rstrip("/") + "/v1", api_key="dummy", max_retries=4)
    set_default_openai_client(client, use_for_tracing=False)
    set_default_openai_api("responses" if a.api == "responses" else "chat_completions")
    agent = Agent(
        name="tester",
        instructions="You are a test agent.",
        model="gpt-5",
        tools=[run_shell, read_file],
    )
    session = SQLiteSession("turnsim", a.session)
    result = await Runner.run(agent, a.prompt, session=session, max_turns=12)
    print(json.dumps({"api": a.api, "final_output": str(result.final_output)}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
