#!/usr/bin/env python3
"""Hand check, no turnsim: a streamed reply cut by `AgentRun.cancel()` in the middle of a
tool call's JSON arguments stays in the history pydantic-ai hands back
(`RunCancelled.all_messages()`) as a `ToolCallPart` holding the partial JSON. Passed back
as `message_history` with a new prompt (in memory, or after the JSON round trip an
application stores it through), pydantic-ai answers the call with a synthesized
'interrupted' return and sends the call itself to the model again; its arguments, which
do not parse, come out of `args_as_dict()` (what pydantic-ai's Anthropic model puts in a
`tool_use` block's `input`) as `{"INVALID_JSON": "<the partial JSON>"}`.

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

CUT = '{"path": "src/lib.rs", "note": "§mod'  # the arguments stop here, mid string
seen = []
started = asyncio.Event()
hang = asyncio.Event()  # never set: the stream stalls inside the call's arguments


async def stream(messages, info):
    seen.append(messages)
    if len(seen) == 1:
        yield "I will write the file."
        yield {1: DeltaToolCall(name="write_file", json_args=CUT, tool_call_id="call_1")}
        started.set()
        await hang.wait()
    yield "ok"


agent = Agent(FunctionModel(stream_function=stream))
ran = []


@agent.tool_plain
async def write_file(path: str, note: str) -> str:
    ran.append(path)
    return "written"


def show(messages):
    out = []
    for m in messages:
        parts = []
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                parts.append(("call", p.tool_name, p.tool_call_id, p.args))
            elif isinstance(p, ToolReturnPart):
                parts.append(("return", p.tool_call_id, p.outcome, p.content))
            elif isinstance(p, (TextPart, UserPromptPart)):
                parts.append(p.content)
            else:
                parts.append(type(p).__name__)
        extra = f" state={m.state}" if isinstance(m, ModelResponse) else ""
        out.append(f"{type(m).__name__}{extra} {parts}")
    return out


async def first_turn():
    canceller = None
    try:
        async with agent.iter("prompt 1: add a note to src/lib.rs") as run:

            async def cancel_when_stalled():  # the host's watchdog
                await started.wait()
                await asyncio.sleep(0)
                run.cancel()

            canceller = asyncio.create_task(cancel_when_stalled())
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as s:
                        async for _ in s:
                            pass
    except RunCancelled as e:
        if canceller is not None:
            await canceller
        return e.all_messages()
    return None


def cut_calls(messages):
    return [p for m in messages if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart) and p.args == CUT]


async def next_request(history):
    async with agent.run_stream("prompt 2: go on", message_history=history) as result:
        await result.get_output()
    return seen[-1]


async def main():
    kept = await first_turn()
    if kept is None:
        print("the run was not cancelled")
        return 1
    print("history kept after the cancel (RunCancelled.all_messages()):")
    for line in show(kept):
        print("  ", line)
    ok = bool(cut_calls(kept))

    # As an application that stores the history and loads it after a restart.
    stored = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(kept))
    for label, history in (("in memory", kept), ("after a JSON round trip", stored)):
        sent = await next_request(history)
        print(f"next request the model got ({label}):")
        for line in show(sent):
            print("  ", line)
        calls = cut_calls(sent)
        inputs = [p.args_as_dict() for p in calls]
        print("   the cut call's input as args_as_dict() renders it:", inputs)
        ok = ok and bool(calls) and inputs == [{"INVALID_JSON": CUT}]
    print("tools run:", ran)
    print("the cut call is sent back as a call with input {'INVALID_JSON': <partial JSON>}:", ok)
    return 0 if ok and not ran else 1


raise SystemExit(asyncio.run(main()))
