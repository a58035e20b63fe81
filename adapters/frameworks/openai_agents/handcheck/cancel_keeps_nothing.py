#!/usr/bin/env python3
"""Hand check, no turnsim: `RunResultStreaming.cancel()` (the documented cancel of a
streamed run) while the model streams leaves the session holding the prompt and
nothing else: not the reply text whose output item had already completed
(`response.output_item.done` was streamed and shown), and nothing that says the turn
was stopped. The next run sends the model its first prompt followed by the second, as
if the first had simply gone unanswered.

Only the SDK, its own `SQLiteSession` and its own fake model (`agents.testing.
ScriptedModel`). Exits 0 when the behaviour shows (it prints the evidence), 1 when it
does not.
"""

import asyncio
import os

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, Runner, SQLiteSession  # noqa: E402
from agents.testing import ModelStep, ScriptedModel  # noqa: E402
from openai.types.responses import (  # noqa: E402
    Response,
    ResponseCreatedEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

SHOWN = "Looking at the parser: the bug is in line 42."
never = asyncio.Event()  # the model stalls after its first item


def message(status, text):
    parts = [ResponseOutputText(text=text, annotations=[], type="output_text")] if text else []
    return ResponseOutputMessage(id="msg_1", content=parts, role="assistant", status=status, type="message")


async def stalling_stream(call):
    created = Response(id="resp_1", created_at=0, model="fake", object="response", output=[], tool_choice="auto", tools=[], parallel_tool_calls=True)
    yield ResponseCreatedEvent(type="response.created", response=created, sequence_number=0)
    yield ResponseOutputItemAddedEvent(type="response.output_item.added", item=message("in_progress", ""), output_index=0, sequence_number=1)
    yield ResponseTextDeltaEvent(
        type="response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=SHOWN, logprobs=[], sequence_number=2
    )
    yield ResponseOutputItemDoneEvent(type="response.output_item.done", item=message("completed", SHOWN), output_index=0, sequence_number=3)
    await never.wait()


async def main():
    model = ScriptedModel([ModelStep.stream(stalling_stream), [message("completed", "ok")]])
    agent = Agent(name="assistant", instructions="be brief", model=model)
    session = SQLiteSession("s1")
    result = Runner.run_streamed(agent, "prompt 1: fix the parser", session=session)
    seen = []
    async for event in result.stream_events():
        kind = event.data.type if event.type == "raw_response_event" else None
        if kind == "response.output_text.delta":
            seen.append(event.data.delta)
        if kind == "response.output_item.done" and not result.is_complete:
            result.cancel()  # as documented; the loop keeps consuming until it ends
    kept = await session.get_items()
    second = Runner.run_streamed(agent, "prompt 2: go on", session=session)
    async for _ in second.stream_events():
        pass
    sent = model.last_call.input
    print("text the user saw streamed:", seen)
    print("session after the cancel:  ", kept)
    print("next request's input:      ", sent)
    texts = repr(sent)
    lost = SHOWN in "".join(seen) and SHOWN not in repr(kept) and SHOWN not in texts
    no_record = [i.get("content") for i in sent if isinstance(i, dict)] == ["prompt 1: fix the parser", "prompt 2: go on"]
    print("the shown text is gone:", lost, "| the next request is just the two prompts:", no_record)
    return 0 if lost and no_record else 1


raise SystemExit(asyncio.run(main()))
