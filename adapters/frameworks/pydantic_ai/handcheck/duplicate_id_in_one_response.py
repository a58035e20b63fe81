#!/usr/bin/env python3
"""Hand check, no turnsim: a response whose two tool calls carry one id fails the run
(pydantic-ai refuses it), but the application that saved the history after the model
answered, and closes out the unanswered calls with pydantic-ai's own
`repair_messages()` as pydantic-ai tells it to, sends that response back on the next
run with both calls under the one id (an Anthropic request with a tool_use id twice in
one message is refused, and every later request of the session with it).

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, ToolCallPart, repair_messages
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

seen_requests = []


async def stream(messages, info):
    seen_requests.append(messages)
    if len(seen_requests) == 1:
        # An OpenAI-compatible provider that streams every parallel call at index 0
        # gives both calls the same id.
        yield {0: DeltaToolCall(name="read_file", json_args='{"path": "a"}', tool_call_id="exec_0")}
        yield {1: DeltaToolCall(name="read_file", json_args='{"path": "b"}', tool_call_id="exec_0")}
    else:
        yield "done"


agent = Agent(FunctionModel(stream_function=stream))


@agent.tool_plain
async def read_file(path: str) -> str:
    return f"contents of {path}"


def calls(messages):
    return [
        (p.tool_name, p.tool_call_id)
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    ]


async def main():
    saved = []
    failure = None
    try:
        async with agent.iter("go") as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as s:
                        async for _ in s:
                            pass
                saved = run.all_messages()  # the application saves after each step
    except Exception as e:  # noqa: BLE001 - the failure is the evidence
        failure = f"{type(e).__name__}: {e}"
    print("first run failed:", failure)
    print("tool calls in the saved history:", calls(saved))
    history = repair_messages(saved)
    async with agent.run_stream("go on", message_history=history) as result:
        await result.get_output()
    last = calls(seen_requests[-1])
    print("tool calls in the next run's request:", last)
    dup = len({i for _, i in last}) < len(last)
    print("two calls of one response share one id in that request:", dup)
    return 0 if failure is not None and dup else 1


raise SystemExit(asyncio.run(main()))
