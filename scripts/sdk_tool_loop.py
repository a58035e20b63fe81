#!/usr/bin/env python3
"""A short tool-use loop with the official Anthropic Python SDK, for `turnsim serve`.

Usage: sdk_tool_loop.py BASE_URL [--history FILE] [--resume] [--prompt TEXT]

Points `anthropic.Anthropic` at BASE_URL (a `turnsim serve` on loopback; nothing
leaves the machine), declares a shell tool and a file tool, and loops: send the
history, run the tool calls the "model" asks for, send the results, until the reply
stops asking. Requests alternate between streaming (`messages.stream`) and not
(`messages.create`), so both of the SDK's paths are exercised; the SDK's own retries
handle the server's 529/429 faults. Prints one JSON line with what happened.

With --history FILE the messages are saved there after every step (the
`message_history` a resumed session reloads); with --resume they are loaded first,
a tool call left without a result gets an error result (it is not run again), and
the prompt is appended. Ctrl+C while a tool runs records an error result saying the
call was interrupted, saves, and exits 130. Used by `turnsim drive --client python-sdk`.
"""

import argparse
import os

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


INTERRUPTED = "[Request interrupted by user]"


def save(path, messages):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(messages, f)
    os.replace(tmp, path)


def resumed_history(path, prompt):
    """The saved messages, calls left without a result closed, and the prompt added."""
    try:
        with open(path, encoding="utf-8") as f:
            messages = json.load(f)
    except (OSError, ValueError):
        messages = []
    if not isinstance(messages, list):
        messages = []
    content = []
    if messages and messages[-1].get("role") == "assistant":
        for block in messages[-1].get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                content.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": "[Tool interrupted: the session stopped before it finished]",
                        "is_error": True,
                    }
                )
    if messages and messages[-1].get("role") == "user" and isinstance(messages[-1].get("content"), list):
        messages[-1]["content"].append({"type": "text", "text": prompt})
    else:
        content.append({"type": "text", "text": prompt})
        messages.append({"role": "user", "content": content})
    return messages


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("--history")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--prompt", default="Run the project's checks and report.")
    opts = parser.parse_args()
    client = anthropic.Anthropic(base_url=opts.base_url, api_key="turnsim-offline", max_retries=4)
    if opts.resume and opts.history:
        messages = resumed_history(opts.history, opts.prompt)
    else:
        messages = [{"role": "user", "content": opts.prompt}]
    save(opts.history, messages)
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
        save(opts.history, messages)
        if stop == "tool_use":
            results = []
            try:
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
            except KeyboardInterrupt:
                done = {r["tool_use_id"] for r in results}
                for block in reply.content:
                    if block.type == "tool_use" and block.id not in done:
                        results.append(
                            {"type": "tool_result", "tool_use_id": block.id, "content": INTERRUPTED, "is_error": True}
                        )
                messages.append({"role": "user", "content": results})
                save(opts.history, messages)
                print(json.dumps({"requests": requests, "tool_calls": tool_calls, "stop_reason": "interrupted"}))
                return 130
            messages.append({"role": "user", "content": results})
            save(opts.history, messages)
        elif stop == "max_tokens":
            messages.append({"role": "user", "content": "Please continue."})
        else:
            break
    print(json.dumps({"requests": requests, "tool_calls": tool_calls, "stop_reason": stop}))
    return 0 if stop == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main())
