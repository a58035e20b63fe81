#!/usr/bin/env python3
"""Hand check, no turnsim: when a saved history ends with a ModelRequest (a prompt saved
before the model answered, then a crash; or a history cut back to a user message), the
next run keeps the stored request as it is in its history but sends the model one
request with both prompts merged: the message an earlier request ended with is sent
changed (it gained a part), though the stored history is untouched.

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart
from pydantic_ai.models.function import FunctionModel

seen = []


async def stream(messages, info):
    seen.append(messages)
    yield "ok"


agent = Agent(FunctionModel(stream_function=stream))


def show(messages):
    return [(type(m).__name__, [getattr(p, "content", None) for p in m.parts]) for m in messages]


async def main():
    stored = [ModelRequest(parts=[UserPromptPart("prompt 1")])]
    saved = ModelMessagesTypeAdapter.dump_json(stored)  # as an application stores it
    async with agent.run_stream("prompt 2", message_history=ModelMessagesTypeAdapter.validate_json(saved)) as result:
        await result.get_output()
    after = result.all_messages()
    print("stored history:          ", show(stored))
    print("history after the run:   ", show(after))
    print("request the model got:   ", show(seen[-1]))
    sent = [getattr(p, "content", None) for p in seen[-1][0].parts]
    merged = isinstance(seen[-1][0], ModelRequest) and sent[:2] == ["prompt 1", "prompt 2"] and len(after) == 3
    print("history keeps two requests, the model gets them merged into one:", merged)
    return 0 if merged else 1


raise SystemExit(asyncio.run(main()))
