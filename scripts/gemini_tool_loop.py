#!/usr/bin/env python3
"""A short tool-use loop with Google's official `google-genai` Python SDK (the Gemini
API), for `turnsim serve`.

Usage: gemini_tool_loop.py BASE_URL [--prompt TEXT] [--drop-response]

Points `genai.Client` at BASE_URL (a `turnsim serve` on loopback; nothing leaves the
machine; the API key is any string), declares a shell tool and a file tool, turns the
SDK's automatic function calling off, and loops: send the contents, run the function
calls the "model" asks for, send their functionResponse parts in a user turn, until a
reply asks for none. Requests alternate between streaming (`generate_content_stream`,
SSE) and not, so both of the SDK's paths run; the SDK's own retry options handle the
server's 5xx/429 faults. Prints one JSON line with what happened.

With --drop-response the client breaks its history on purpose: after the first round
of calls it sends a user text instead of the function responses, which the Gemini API
refuses with a 400; the loop stops there and reports the refusal's message.
"""

import argparse
import json
import subprocess
import sys

from google import genai
from google.genai import errors, types

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


def run_tool(name, args):
    """Runs one call; returns its output text."""
    args = dict(args or {})
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


def step(client, config, contents, stream):
    """One request; returns the model's content (streamed parts gathered in order)."""
    if not stream:
        response = client.models.generate_content(
            model="gemini-2.5-pro", contents=contents, config=config
        )
        return response.candidates[0].content
    parts = []
    for chunk in client.models.generate_content_stream(
        model="gemini-2.5-pro", contents=contents, config=config
    ):
        if chunk.candidates and chunk.candidates[0].content and chunk.candidates[0].content.parts:
            parts.extend(chunk.candidates[0].content.parts)
    return types.Content(role="model", parts=parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base_url")
    ap.add_argument("--prompt", default="Run the checks, then summarise.")
    ap.add_argument("--drop-response", action="store_true")
    ap.add_argument("--max-requests", type=int, default=12)
    a = ap.parse_args()
    client = genai.Client(
        api_key="turnsim",
        http_options=types.HttpOptions(
            base_url=a.base_url.rstrip("/"),
            timeout=30_000,
            retry_options=types.HttpRetryOptions(attempts=4, initial_delay=0.2, max_delay=2.0),
        ),
    )
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=n, description=DESCRIPTIONS[n], parameters_json_schema=p
            )
            for n, p in PARAMS.items()
        ]
    )
    config = types.GenerateContentConfig(
        system_instruction="You are a test agent.",
        tools=[tool],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents = [types.Content(role="user", parts=[types.Part.from_text(text=a.prompt)])]
    requests = calls = 0
    finished = False
    dropped = False
    refused = None
    while requests < a.max_requests:
        stream = requests % 2 == 0
        requests += 1
        try:
            model = step(client, config, contents, stream)
        except errors.ClientError as e:
            if not dropped:
                raise
            refused = f"{e.code} {e.status}: {e.message}"
            break
        contents.append(model)
        pending = [p.function_call for p in model.parts or [] if p.function_call]
        if not pending:
            finished = True
            break
        if a.drop_response and not dropped:
            dropped = True
            contents.append(
                types.Content(role="user", parts=[types.Part.from_text(text="Never mind those.")])
            )
            continue
        answers = []
        for call in pending:
            calls += 1
            output = run_tool(call.name, call.args)
            part = types.Part.from_function_response(name=call.name, response={"output": output})
            if call.id:
                part.function_response.id = call.id
            answers.append(part)
        contents.append(types.Content(role="user", parts=answers))
    print(json.dumps({"requests": requests, "tool_calls": calls, "finished": finished,
                      "dropped": dropped, "refused": refused}))
    return 0 if finished or refused else 1


if __name__ == "__main__":
    sys.exit(main())
