#!/usr/bin/env python3
"""Hand check, no turnsim: after `AgentRun.cancel()` mid-stream, the history pydantic-ai
hands back (`RunCancelled.all_messages()`) holds the cut-off reply and nothing that says
the turn was stopped; passed back as `message_history`, the next request shows the
model its own half sentence followed by a new prompt, as if it had finished.

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel

seen = []
started = asyncio.Event()
hang = asyncio.Event()  # never set: the stream stalls after its first words


async def stream(messages, info):
    seen.append(messages)
    if len(seen) == 1:
        yield "Looking at the parser"
        started.set()
        await hang.wait()
    yield "ok"


agent = Agent(FunctionModel(stream_function=stream))


def show(messages):
    out = []
    for m in messages:
        parts = [getattr(p, "content", None) for p in m.parts]
        out.append((type(m).__name__, parts))
    return out


async def first_turn():
    canceller = None
    try:
        async with agent.iter("prompt 1: fix the parser") as run:

            async def cancel_when_streaming():
                await started.wait()
                await asyncio.sleep(0)
                run.cancel()

            canceller = asyncio.create_task(cancel_when_streaming())
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as s:
                        async for _ in s:
                            pass
    except RunCancelled as e:
        # As the docs show an application keeping a cancelled run's history.
        if canceller is not None:
            await canceller
        return e.all_messages()
    return None


async def main():
    kept = await first_turn()
    if kept is None:
        print("the run was not cancelled")
        return 1
    async with agent.run_stream("prompt 2: go on", message_history=kept) as result:
        await result.get_output()
    sent = seen[-1]
    print("history kept after the cancel:", show(kept))
    print("the cut reply's finish_reason:", [m.finish_reason for m in kept if isinstance(m, ModelResponse)])
    print("next request the model got:   ", show(sent))
    texts = [p.content for m in sent for p in m.parts if isinstance(p, (TextPart, UserPromptPart))]
    cut_reply = any(
        isinstance(m, ModelResponse) and any(isinstance(p, TextPart) and p.content.startswith("Looking") for p in m.parts)
        for m in sent
    )
    prompts = [p.content for m in sent if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
    record = [t for t in texts if t not in prompts and not t.startswith("Looking")]
    print("the cut reply is sent back:", cut_reply, "| anything saying the turn was stopped:", record)
    return 0 if cut_reply and not record else 1


raise SystemExit(asyncio.run(main()))
