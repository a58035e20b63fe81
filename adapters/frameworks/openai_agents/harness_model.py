"""The adapter's model: an OpenAI Agents SDK `Model` whose provider is the harness.

Guarantee: nothing here decides what the turn does. `stream_response` records and
sends one request per call the SDK makes (through `on_request`, which persists the
send before it goes out), then relays the harness's Anthropic-style stream as the
Responses-API stream events the SDK's run loop consumes (`response.created`, the
`output_item` / `content_part` / delta / done events, `response.completed`), as a
provider integration that fronts a Messages-API model does. A stream that breaks the
event rules raises `ModelBehaviorError` (the SDK's exception for a model that
misbehaves); a provider error event is the Responses stream's own `error` event; a
reply cut at the output limit is `response.incomplete` (reason `max_output_tokens`),
as the Responses API reports it. Every id is derived from the request's op and the
block's index, so a run is a function of its inputs. Adapter, not framework.
"""

from __future__ import annotations

import asyncio
import json

from agents.exceptions import ModelBehaviorError
from agents.models.interface import Model
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseErrorEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningTextDeltaEvent,
    ResponseReasoningTextDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_reasoning_item import Content as ReasoningContent
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

MODEL_NAME = "turnsim"


class Generation:
    """One request in flight: the harness's events for it, in arrival order."""

    def __init__(self, op):
        self.op = op
        self.queue = asyncio.Queue()


def _response(op, status, output, usage=None, incomplete=None):
    return Response(
        id=f"resp_{op}",
        created_at=0,
        model=MODEL_NAME,
        object="response",
        output=output,
        tool_choice="auto",
        tools=[],
        parallel_tool_calls=True,
        status=status,
        usage=usage,
        incomplete_details=incomplete,
    )


class _Block:
    """One content block of the reply as a Responses output item being built."""

    def __init__(self, op, index, block, output_index):
        self.kind = block["type"]
        self.index = index
        self.output_index = output_index
        self.text = []
        self.signature = []
        self.block = block
        self.item_id = {"text": "msg", "tool_use": "fc", "thinking": "rs", "redacted_thinking": "rs"}[self.kind] + f"_{op}_{index}"

    def added(self):
        if self.kind == "text":
            return ResponseOutputMessage(id=self.item_id, content=[], role="assistant", status="in_progress", type="message")
        if self.kind == "tool_use":
            b = self.block
            return ResponseFunctionToolCall(id=self.item_id, call_id=b["id"], name=b["name"], arguments="", type="function_call", status="in_progress")
        return ResponseReasoningItem(id=self.item_id, summary=[], type="reasoning")

    def done(self):
        text = "".join(self.text)
        if self.kind == "text":
            part = ResponseOutputText(text=text, annotations=[], type="output_text")
            return ResponseOutputMessage(id=self.item_id, content=[part], role="assistant", status="completed", type="message")
        if self.kind == "tool_use":
            b = self.block
            return ResponseFunctionToolCall(id=self.item_id, call_id=b["id"], name=b["name"], arguments=text, type="function_call", status="completed")
        # Thinking keeps its native Anthropic block in provider_data["thinking_blocks"],
        # the SDK's own convention for Claude reasoning (chatcmpl_converter), and its
        # text and signature in the Responses fields.
        if self.kind == "redacted_thinking":
            native = {"type": "redacted_thinking", "data": self.block.get("data", "")}
            item = ResponseReasoningItem(id=self.item_id, summary=[], type="reasoning", encrypted_content=native["data"])
        else:
            native = {"type": "thinking", "thinking": text}
            sig = "".join(self.signature)
            if sig:
                native["signature"] = sig
            item = ResponseReasoningItem(
                id=self.item_id, summary=[], type="reasoning", content=[ReasoningContent(text=text, type="reasoning_text")], encrypted_content=sig or None
            )
        item.provider_data = {"model": MODEL_NAME, "thinking_blocks": [native]}
        return item


class HarnessStream:
    """Translates one generation's harness events into Responses stream events."""

    def __init__(self, gen):
        self.gen = gen
        self.seq = 0
        self.started = False
        self.open = {}  # index -> _Block
        self.stopped = set()
        self.output = []  # finished items, in the order their blocks stopped
        self.stop_reason = None
        self.usage = None

    def ev(self, cls, **kw):
        self.seq += 1
        return cls(sequence_number=self.seq - 1, **kw)

    async def events(self):
        op = self.gen.op
        while True:
            e = await self.gen.queue.get()
            kind = e["event"]
            if kind == "error":
                yield self.ev(ResponseErrorEvent, type="error", code=e.get("kind"), message=e.get("message") or "")
                return
            if kind == "message_start":
                if self.started:
                    raise ModelBehaviorError("stream: message_start twice")
                self.started = True
                yield self.ev(ResponseCreatedEvent, type="response.created", response=_response(op, "in_progress", []))
                continue
            if not self.started:
                raise ModelBehaviorError(f"stream: {kind} before message_start")
            if kind == "block_start":
                i = e["index"]
                if i in self.open or i in self.stopped:
                    raise ModelBehaviorError(f"stream: block {i} started twice")
                if e["block"]["type"] not in ("text", "tool_use", "thinking", "redacted_thinking"):
                    raise ModelBehaviorError(f"stream: unknown block type {e['block']['type']!r}")
                b = self.open[i] = _Block(op, i, e["block"], len(self.output) + len(self.open))
                yield self.ev(ResponseOutputItemAddedEvent, type="response.output_item.added", item=b.added(), output_index=b.output_index)
                if b.kind == "text":
                    yield self.ev(
                        ResponseContentPartAddedEvent,
                        type="response.content_part.added",
                        item_id=b.item_id,
                        output_index=b.output_index,
                        content_index=0,
                        part=ResponseOutputText(text="", annotations=[], type="output_text"),
                    )
                continue
            if kind == "message_delta":
                self.stop_reason = e.get("stop_reason")
                u = e.get("usage") or {}
                i, o = u.get("input_tokens", 0), u.get("output_tokens", 0)
                self.usage = ResponseUsage(
                    input_tokens=i,
                    output_tokens=o,
                    total_tokens=i + o,
                    input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                    output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
                )
                continue
            if kind == "message_stop":
                if self.open:
                    raise ModelBehaviorError(f"stream: message_stop before block {min(self.open)} stopped")
                if self.stop_reason is None:
                    raise ModelBehaviorError("stream: message_stop without a stop reason")
                if self.stop_reason == "max_tokens":
                    # The Responses API reports a reply cut at the output limit so.
                    yield self.ev(
                        ResponseIncompleteEvent,
                        type="response.incomplete",
                        response=_response(op, "incomplete", self.output, self.usage, {"reason": "max_output_tokens"}),
                    )
                else:
                    yield self.ev(ResponseCompletedEvent, type="response.completed", response=_response(op, "completed", self.output, self.usage))
                return
            i = e.get("index")
            b = self.open.get(i)
            if b is None:
                raise ModelBehaviorError(f"stream: {kind} for block {i}, which is not open")
            if kind == "block_stop":
                del self.open[i]
                self.stopped.add(i)
                for out in self.close(b):
                    yield out
            elif kind == "text_delta" and b.kind == "text":
                b.text.append(e["text"])
                yield self.ev(
                    ResponseTextDeltaEvent,
                    type="response.output_text.delta",
                    item_id=b.item_id,
                    output_index=b.output_index,
                    content_index=0,
                    delta=e["text"],
                    logprobs=[],
                )
            elif kind == "thinking_delta" and b.kind == "thinking":
                b.text.append(e["thinking"])
                yield self.ev(
                    ResponseReasoningTextDeltaEvent,
                    type="response.reasoning_text.delta",
                    item_id=b.item_id,
                    output_index=b.output_index,
                    content_index=0,
                    delta=e["thinking"],
                )
            elif kind == "signature_delta" and b.kind == "thinking":
                b.signature.append(e["signature"])
            elif kind == "input_json_delta" and b.kind == "tool_use":
                b.text.append(e["partial_json"])
                yield self.ev(
                    ResponseFunctionCallArgumentsDeltaEvent,
                    type="response.function_call_arguments.delta",
                    item_id=b.item_id,
                    output_index=b.output_index,
                    delta=e["partial_json"],
                )
            else:
                raise ModelBehaviorError(f"stream: {kind} for a {b.kind} block")

    def close(self, b):
        text = "".join(b.text)
        if b.kind == "tool_use":
            # The Responses API streams only JSON arguments; a provider integration
            # refuses a tool input that is not a JSON object.
            try:
                ok = isinstance(json.loads(text or "{}"), dict)
            except ValueError:
                ok = False
            if not ok:
                raise ModelBehaviorError(f"stream: tool_use {b.block['id']}: input is not a JSON object")
            yield self.ev(
                ResponseFunctionCallArgumentsDoneEvent,
                type="response.function_call_arguments.done",
                item_id=b.item_id,
                output_index=b.output_index,
                arguments=text,
                name=b.block["name"],
            )
        elif b.kind == "text":
            yield self.ev(
                ResponseTextDoneEvent, type="response.output_text.done", item_id=b.item_id, output_index=b.output_index, content_index=0, text=text, logprobs=[]
            )
            yield self.ev(
                ResponseContentPartDoneEvent,
                type="response.content_part.done",
                item_id=b.item_id,
                output_index=b.output_index,
                content_index=0,
                part=ResponseOutputText(text=text, annotations=[], type="output_text"),
            )
        elif b.kind == "thinking":
            yield self.ev(
                ResponseReasoningTextDoneEvent, type="response.reasoning_text.done", item_id=b.item_id, output_index=b.output_index, content_index=0, text=text
            )
        item = b.done()
        self.output.append(item)
        yield self.ev(ResponseOutputItemDoneEvent, type="response.output_item.done", item=item, output_index=b.output_index)


class HarnessModel(Model):
    """`on_request(instructions, input, tools)` records and sends the request and
    returns the Generation its events will arrive on; `on_end(gen)` is called when the
    SDK stops reading that stream (finished, failed or cancelled)."""

    def __init__(self, on_request, on_end):
        self.on_request = on_request
        self.on_end = on_end

    async def get_response(self, *args, **kwargs):
        raise ModelBehaviorError("this adapter streams every request (Runner.run_streamed)")

    async def stream_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs):
        gen = self.on_request(system_instructions, input, tools)
        try:
            async for event in HarnessStream(gen).events():
                yield event
        finally:
            self.on_end(gen)
