#!/usr/bin/env python3
"""A short tool-use loop with the official `openai` Python SDK, for `turnsim serve`.

Usage: openai_tool_loop.py BASE_URL [--api responses|chat] [--prompt TEXT] [--history FILE] [--resume]

Points `openai.OpenAI` at BASE_URL/v1 (a `turnsim serve` on loopback; nothing leaves
the machine), declares a shell tool and a file tool, and loops: send the conversation,
run the function calls the "model" asks for, send their outputs, until a reply asks
for none. With `--api responses` (the default) it speaks the Responses API and sends
every output item back (reasoning items included, with their encrypted content, as a
stateless client must); with `--api chat` it speaks Chat Completions with `tool`
messages. Requests alternate between streaming and not, so both of the SDK's paths
run; the SDK's own retries handle the server's 5xx/429 faults. Prints one JSON line
with what happened.

With --history FILE the conversation is saved there after every step; with --resume
it is loaded first, a call left without an output gets an error output (it is not run
again), and the prompt is appended. Used by `turnsim drive --client openai-chat`.
"""

import argparse
import json
import os
import subprocess
import sys

import openai

PARAMS = {
    "exec_command": {
        "type": "object",
        "properties": {"cmd": {"type": "string"}},
        "required": ["cmd"],
    },
    "read_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
DESCRIPTIONS = {
    "exec_command": "Run a shell command and return its output.",
    "read_file": "Read a text file.",
}


def run_tool(name, arguments):
    """Runs one call; returns its output text."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError as e:
        return f"the arguments are not JSON: {e}"
    if name == "exec_command":
        done = subprocess.run(
            ["sh", "-c", args.get("cmd", "")], capture_output=True, text=True, timeout=60
        )
        return done.stdout.strip() or f"(no output, exit {done.returncode})"
    if name == "read_file":
        try:
            with open(args.get("path", ""), encoding="utf-8") as f:
                return f.read() or "(empty file)"
        except OSError as e:
            return f"cannot read: {e}"
    return f"no such tool: {name!r}"


def responses_tools():
    return [
        {"type": "function", "name": n, "description": DESCRIPTIONS[n], "parameters": p}
        for n, p in PARAMS.items()
    ]


def chat_tools():
    return [
        {"type": "function", "function": {"name": n, "description": DESCRIPTIONS[n], "parameters": p}}
        for n, p in PARAMS.items()
    ]


def responses_step(client, items, stream):
    """One Responses request; returns the output items as input items."""
    kwargs = dict(
        model="gpt-5",
        instructions="You are a test agent.",
        input=items,
        tools=responses_tools(),
        store=False,
        include=["reasoning.encrypted_content"],
        reasoning={"effort": "low"},
    )
    if stream:
        with client.responses.stream(**kwargs) as s:
            response = s.get_final_response()
    else:
        response = client.responses.create(**kwargs)
    return [o.model_dump(exclude_none=True) for o in response.output]


def chat_step(client, messages, stream):
    """One Chat request; returns the assistant message as a request message."""
    kwargs = dict(model="gpt-4o", messages=messages, tools=chat_tools())
    if stream:
        with client.chat.completions.stream(**kwargs) as s:
            completion = s.get_final_completion()
    else:
        completion = client.chat.completions.create(**kwargs)
    m = completion.choices[0].message
    out = {"role": "assistant", "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in m.tool_calls
        ]
    return out


def answer_orphans(conv, api):
    """Gives a call left without an output an error output (a resumed session)."""
    if api == "responses":
        answered = {i.get("call_id") for i in conv if i.get("type") == "function_call_output"}
        for i in list(conv):
            if i.get("type") == "function_call" and i["call_id"] not in answered:
                conv.append({"type": "function_call_output", "call_id": i["call_id"],
                             "output": "interrupted: the session ended before this call ran"})
    else:
        answered = {m.get("tool_call_id") for m in conv if m.get("role") == "tool"}
        for m in list(conv):
            for c in m.get("tool_calls") or []:
                if c["id"] not in answered:
                    conv.append({"role": "tool", "tool_call_id": c["id"],
                                 "content": "interrupted: the session ended before this call ran"})


def save(path, conv):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(conv, f)
        os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base_url")
    ap.add_argument("--api", choices=["responses", "chat"], default="responses")
    ap.add_argument("--prompt", default="Run the checks, then summarise.")
    ap.add_argument("--history")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--max-requests", type=int, default=12)
    a = ap.parse_args()
    client = openai.OpenAI(
        base_url=a.base_url.rstrip("/") + "/v1", api_key="dummy", max_retries=4, timeout=30
    )
    conv = []
    if a.resume and a.history and os.path.exists(a.history):
        with open(a.history, encoding="utf-8") as f:
            conv = json.load(f)
        answer_orphans(conv, a.api)
    if a.api == "responses":
        conv.append({"role": "user", "content": a.prompt})
    else:
        if not conv:
            conv.append({"role": "system", "content": "You are a test agent."})
        conv.append({"role": "user", "content": a.prompt})
    save(a.history, conv)
    requests = calls = 0
    finished = False
    while requests < a.max_requests:
        stream = requests % 2 == 0
        requests += 1
        if a.api == "responses":
            out = responses_step(client, conv, stream)
            conv.extend(out)
            pending = [(o["call_id"], o["name"], o.get("arguments", "")) for o in out
                       if o.get("type") == "function_call"]
        else:
            msg = chat_step(client, conv, stream)
            conv.append(msg)
            pending = [(c["id"], c["function"]["name"], c["function"]["arguments"])
                       for c in msg.get("tool_calls", [])]
        save(a.history, conv)
        if not pending:
            finished = True
            break
        for call_id, name, arguments in pending:
            calls += 1
            output = run_tool(name, arguments)
            if a.api == "responses":
                conv.append({"type": "function_call_output", "call_id": call_id, "output": output})
            else:
                conv.append({"role": "tool", "tool_call_id": call_id, "content": output})
            save(a.history, conv)
    print(json.dumps({"api": a.api, "requests": requests, "tool_calls": calls,
                      "finished": finished}))
    return 0 if finished else 1


if __name__ == "__main__":
    sys.exit(main())
