#!/usr/bin/env python3
"""A pydantic-ai agent with a shell tool and `message_history` resume, for `turnsim drive`.

Usage: pydantic_ai_loop.py BASE_URL --history FILE [--resume] [--prompt TEXT]

Points pydantic-ai's Anthropic model at BASE_URL (a `turnsim serve` on loopback;
nothing leaves the machine) and runs one agent run with a `bash` tool. The run's
messages are saved to FILE when the run ends (pydantic-ai hands them over only then,
through `all_messages_json()`); with --resume they are loaded first and passed as
`message_history`, the way pydantic-ai documents continuing a conversation. A run cut
short by a signal therefore saves nothing: that is this usage pattern's behaviour,
and `turnsim drive --client pydantic-ai` reports what it costs. Prints one JSON line.
Needs `pip install "pydantic-ai-slim[anthropic]"`.
"""

import argparse
import json
import os
import subprocess
import sys

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider


def save_atomically(path, data):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("base_url")
    p.add_argument("--history", required=True)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--prompt", default="List the files here, then read one.")
    a = p.parse_args()

    provider = AnthropicProvider(api_key="turnsim-offline", base_url=a.base_url)
    model = AnthropicModel("claude-sonnet-4-5", provider=provider)
    agent = Agent(model, system_prompt="You are a careful coding agent. Use bash to look around.")

    @agent.tool_plain
    def bash(command: str) -> str:
        """Run a shell command and return its output."""
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
        return (done.stdout + done.stderr) or f"exit status {done.returncode}"

    history = None
    if a.resume and os.path.exists(a.history):
        with open(a.history, "rb") as f:
            history = ModelMessagesTypeAdapter.validate_json(f.read())

    try:
        result = agent.run_sync(a.prompt, message_history=history)
    except KeyboardInterrupt:
        print(json.dumps({"ok": False, "interrupted": True}))
        return 130
    save_atomically(a.history, result.all_messages_json())
    print(json.dumps({"ok": True, "messages": len(result.all_messages()), "output": str(result.output)[:200]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
