#!/usr/bin/env python3
"""Hand check, no turnsim: pydantic-ai keeps a tool-call id the model repeats in a
later response verbatim, so one history holds two different calls with one id and the
next request carries both (an Anthropic request with duplicate tool_use ids is refused).

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

seen_requests = []


async def stream(messages, info):
    seen_requests.append(messages)
    calls = sum(isinstance(p, ToolCallPart) for m in messages if isinstance(m, ModelResponse) for p in m.parts)
    if calls == 0:
        yield {0: DeltaToolCall(name="read_file", json_args='{"path": "a"}', tool_call_id="exec_0")}
    elif calls == 1:  # a provider that numbers calls per response reuses the id
        yield {0: DeltaToolCall(name="search", json_args='{"path": "b"}', tool_call_id="exec_0")}
    else:
        yield "done"


agent = Agent(FunctionModel(stream_function=stream))
ran = []


@agent.tool_plain
async def read_file(path: str) -> str:
    ran.append(("read_file", path))
    return f"contents of {path}"


@agent.tool_plain
async def search(path: str) -> str:
    ran.append(("search", path))
    return f"hits in {path}"


async def main():
    async with agent.run_stream("go") as result:
        await result.get_output()
    ids = [(p.tool_name, p.tool_call_id) for m in result.all_messages() if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    last = [(p.tool_name, p.tool_call_id) for m in seen_requests[-1] if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    print("tools run:", ran)
    print("tool calls in the history:", ids)
    print("tool calls in the last request:", last)
    dup = len({i for _, i in last}) < len(last)
    print("two different calls share one id in one request:", dup)
    return 0 if dup else 1


raise SystemExit(asyncio.run(main()))
