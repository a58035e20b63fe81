#!/usr/bin/env python3
"""Hand check, no turnsim: a reply cut at the output limit, which the Responses API
ends with `response.incomplete` (reason `max_output_tokens`), fails the whole streamed
run with `ModelBehaviorError`; the reply text the user watched stream is not saved in
the session, which keeps only the prompt.

Only the SDK, its own `SQLiteSession` and its own fake model (`agents.testing.
ScriptedModel`). Exits 0 when the behaviour shows (it prints the evidence), 1 when it
does not.
"""

import asyncio
import os

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, ModelBehaviorError, Runner, SQLiteSession  # noqa: E402
from agents.testing import ModelStep, ScriptedModel  # noqa: E402
from openai.types.responses import (  # noqa: E402
    Response,
    ResponseCreatedEvent,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

CUT = "The parser fails because the tokenizer drops the last"


def message(status, text):
    parts = [ResponseOutputText(text=text, annotations=[], type="output_text")] if text else []
    return ResponseOutputMessage(id="msg_1", content=parts, role="assistant", status=status, type="message")


def response(status, output, incomplete=None):
    return Response(
        id="resp_1",
        created_at=0,
        model="fake",
        object="response",
        output=output,
        tool_choice="auto",
        tools=[],
        parallel_tool_calls=True,
        status=status,
        incomplete_details=incomplete,
    )


EVENTS = [
    ResponseCreatedEvent(type="response.created", response=response("in_progress", []), sequence_number=0),
    ResponseOutputItemAddedEvent(type="response.output_item.added", item=message("in_progress", ""), output_index=0, sequence_number=1),
    ResponseTextDeltaEvent(type="response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=CUT, logprobs=[], sequence_number=2),
    ResponseOutputItemDoneEvent(type="response.output_item.done", item=message("incomplete", CUT), output_index=0, sequence_number=3),
    ResponseIncompleteEvent(
        type="response.incomplete",
        response=response("incomplete", [message("incomplete", CUT)], {"reason": "max_output_tokens"}),
        sequence_number=4,
    ),
]


async def main():
    model = ScriptedModel([ModelStep.stream(EVENTS)])
    agent = Agent(name="assistant", model=model)
    session = SQLiteSession("s1")
    result = Runner.run_streamed(agent, "explain the parser bug", session=session)
    shown = []
    try:
        async for event in result.stream_events():
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                shown.append(event.data.delta)
    except ModelBehaviorError as e:
        kept = await session.get_items()
        print("text the user saw:", shown)
        print("the run failed:   ", repr(e))
        print("session after it: ", kept)
        return 0 if CUT in "".join(shown) and CUT not in repr(kept) else 1
    print("the run ended:", result.final_output)
    return 1


raise SystemExit(asyncio.run(main()))
