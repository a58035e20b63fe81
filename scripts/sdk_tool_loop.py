#!/usr/bin/env python3
"""A short tool-use loop with the official Anthropic Python SDK, for `turnsim serve`.

Usage: sdk_tool_loop.py BASE_URL

Points `anthropic.Anthropic` at BASE_URL (a `turnsim serve` on loopback; nothing
leaves the machine), declares a shell tool and a file tool, and loops: send the
history, run the tool calls the "model" asks for, send the results, until the reply
stops asking. Requests alternate between streaming (`messages.stream`) and not
(`messages.create`), so both of the SDK's paths are exercised; the SDK's own retries
handle the server's 529/429 faults. Prints one JSON line with what happened.
"""

import json
import subprocess
import sys

import anthropic

TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "input_schema": {
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "number"},
            },
            "required": ["command"],
        },
    },
    {
        "name": "read_file",
        "description": "Read a text file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
]


def run_tool(block):
    """Runs one tool call; returns (content, is_error)."""
    if block.name == "bash":
        done = subprocess.run(
            ["sh", "-c", block.input.get("command", "")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return (done.stdout.strip() or "(no output)", done.returncode != 0)
    if block.name == "read_file":
        try:
            with open(block.input.get("path", ""), encoding="utf-8") as f:
                return (f.read() or "(empty file)", False)
        except OSError as e:
            return (f"cannot read: {e}", True)
    return (f"no such tool: {block.name!r}", True)


def as_param(block):
    """A response block as a request block."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(exclude_none=True)


def main():
    base_url = sys.argv[1]
    client = anthropic.Anthropic(base_url=base_url, api_key="turnsim-offline", max_retries=4)
    messages = [{"role": "user", "content": "Run the project's checks and report."}]
    requests = 0
    tool_calls = 0
    stop = None
    for step in range(12):
        args = dict(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            system="You are a careful test agent.",
            tools=TOOLS,
            messages=messages,
        )
        if step % 2 == 0:
            with client.messages.stream(**args) as stream:
                reply = stream.get_final_message()
        else:
            reply = client.messages.create(**args)
        requests += 1
        stop = reply.stop_reason
        messages.append({"role": "assistant", "content": [as_param(b) for b in reply.content]})
        if stop == "tool_use":
            results = []
            for block in reply.content:
                if block.type == "tool_use":
                    tool_calls += 1
                    content, is_error = run_tool(block)
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": block.id,
                            "content": content,
                            "is_error": is_error,
                        }
                    )
            messages.append({"role": "user", "content": results})
        elif stop == "max_tokens":
            messages.append({"role": "user", "content": "Please continue."})
        else:
            break
    print(json.dumps({"requests": requests, "tool_calls": tool_calls, "stop_reason": stop}))
    return 0 if stop == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main())
