#!/usr/bin/env python3
"""Hand check, no turnsim: a call id the model repeats in a later run of the same
session (a provider that numbers calls per response, `exec_0`) is kept verbatim: the
SDK runs both calls (two different tools under one id), and on the next request its
input de-duplication, keyed on the call id and preferring the latest, drops the first
call and its output from what the model is sent and moves the second call up into the
first turn, ahead of the reply that followed the first call. (Within one run the SDK
refuses a reused id and fails the run; across runs it does not see it.)

Only the SDK, its own `SQLiteSession` and its own fake model (`agents.testing.
ScriptedModel`). Exits 0 when the behaviour shows (it prints the evidence), 1 when it
does not.
"""

import asyncio
import os

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, ModelBehaviorError, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.testing import ScriptedModel  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

ran = []


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    ran.append(("read_file", path))
    return "contents of " + path


@function_tool
def search(query: str) -> str:
    """Search the code."""
    ran.append(("search", query))
    return "hits for " + query


def call(name, args):
    return ResponseFunctionToolCall(id="fc_" + name, call_id="exec_0", name=name, arguments=args, type="function_call", status="completed")


def text(t):
    return ResponseOutputMessage(id="msg_" + t, content=[ResponseOutputText(text=t, annotations=[], type="output_text")], role="assistant", status="completed", type="message")


async def run(agent, session, prompt):
    result = Runner.run_streamed(agent, prompt, session=session)
    async for _ in result.stream_events():
        pass


def show(items):
    out = []
    for i in items:
        kind = i.get("type") or i.get("role")
        detail = i.get("name") or i.get("output") or i.get("content")
        out.append((kind, i.get("call_id"), detail if isinstance(detail, str) else "text"))
    return out


async def main():
    model = ScriptedModel([[call("read_file", '{"path": "a"}')], [text("read")], [call("search", '{"query": "b"}')], [text("found")]])
    agent = Agent(name="assistant", model=model, tools=[read_file, search])
    session = SQLiteSession("s1")
    await run(agent, session, "prompt 1")
    await run(agent, session, "prompt 2")
    saved = await session.get_items()
    sent = model.last_call.input
    print("tools run:            ", ran)
    print("session holds:        ", show(saved))
    print("last request's input: ", show(sent))
    both_ran = ran == [("read_file", "a"), ("search", "b")]
    first_gone = not any(i.get("name") == "read_file" or i.get("output") == "contents of a" for i in sent)
    # The same reuse within one run: the SDK refuses it and the run fails.
    model = ScriptedModel([[call("read_file", '{"path": "a"}')], [call("search", '{"query": "b"}')]])
    agent = Agent(name="assistant", model=model, tools=[read_file, search])
    try:
        await run(agent, None, "prompt 1")
        refused = None
    except ModelBehaviorError as e:
        refused = e
    print("reused within one run: ", repr(refused))
    return 0 if both_ran and first_gone and refused is not None else 1


raise SystemExit(asyncio.run(main()))
