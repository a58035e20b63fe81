"""The adapter's side of pydantic-ai: a custom `Model` whose stream is the harness's
`stream` inputs, the translation of pydantic-ai messages into the Anthropic wire form
turnsim judges, and a deterministic clock and id source.

Guarantee: nothing here decides what the turn does. The model only relays what the
harness streams (one `send` per request the framework makes, recorded in the log before
it goes out), the wire form is a pure function of the framework's own messages (the
same message object, unchanged, always maps to the same wire object, so turnsim's
identity checks see exactly what the framework kept or rebuilt), and the clock and ids
are pinned so a run is a function of its inputs alone. Everything in this file is
adapter, not framework; it is kept to what a pydantic-ai user who plugs in their own
provider would write.
"""

from __future__ import annotations

import asyncio
import base64
import json
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pydantic_ai._utils as _pa_utils
import pydantic_ai._uuid as _pa_uuid
from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior
from pydantic_ai._thinking_part import render_replayed_thinking
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    BinaryContent,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai._instrumentation import get_instructions  # noqa: F401 (the request's system text)
from pydantic_ai.models import Model, StreamedResponse
from pydantic_ai.usage import RequestUsage

# --- determinism ------------------------------------------------------------------
# pydantic-ai stamps messages with the wall clock and with uuid7 run ids, both of which
# reach the persisted history (the durable log). It offers no injection point for
# either, so the adapter replaces the code of the two functions it calls for them; the
# framework's logic is untouched. The id counter is reset for every engine (see
# DeterministicIds.reset) so a reused process gives the same ids as a fresh one.


class DeterministicIds:
    def __init__(self):
        self.n = 0

    def reset(self, base):
        self.n = base

    def next(self):
        import uuid

        self.n += 1
        return uuid.UUID(int=(0x7 << 76) | (0x8 << 60) | self.n)


IDS = DeterministicIds()
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def _pinned_now():
    return _turnsim_epoch  # noqa: F821 (a global injected into pydantic_ai._utils)


def _pinned_uuid7():
    return _turnsim_ids.next()  # noqa: F821 (a global injected into pydantic_ai._uuid)


_pa_utils._turnsim_epoch = EPOCH
_pa_utils.now_utc.__code__ = _pinned_now.__code__
_pa_uuid._turnsim_ids = IDS
_pa_uuid.uuid7.__code__ = _pinned_uuid7.__code__


# --- tool results of blocks -------------------------------------------------------


def tool_content(content):
    """A tool outcome's `content` as the tool function returns it to pydantic-ai: a string
    as it is, an array of blocks as pydantic-ai's own multi-part return, a list of a
    `str` per text block and a `BinaryContent` per image or document (the return its
    `ToolReturn` docstring names for content "sent natively in the tool result"), so the
    framework, not the adapter, decides what reaches the model."""
    if isinstance(content, str):
        return content
    return [_content_item(b) for b in content]


def _content_item(block):
    kind, source = block.get("type"), block.get("source") or {}
    if kind == "text":
        return block["text"]
    if kind in ("image", "document") and source.get("type") == "base64":
        return BinaryContent(base64.b64decode(source["data"], validate=True), media_type=source["media_type"])
    if kind == "document" and source.get("type") == "text":
        return BinaryContent(source["data"].encode(), media_type=source.get("media_type", "text/plain"))
    raise SystemExit(f"pydantic-ai adapter: a tool result block {json.dumps(block)[:120]} has no pydantic-ai content type (expected text, a base64 image or document, or a text document)")


# --- wire form -----------------------------------------------------------------------


def _tool_return_text(part):
    # As pydantic-ai's Anthropic model renders a tool return: the content items as text,
    # an error not wrapped (its `is_error` says it).
    items = part.content_items(mode="str", wrap_if_error=False)
    return "".join(i if isinstance(i, str) else json.dumps(i, sort_keys=True) for i in items)


def _tool_return_blocks(part):
    """A multi-part tool return as pydantic-ai's Anthropic model maps it
    (`_map_tool_return_part`): one text block per string item, an image or document
    block per file (`_map_binary_data`), in the order the tool gave them."""
    out = []
    for item in part.content_items(mode="str", wrap_if_error=False):
        if isinstance(item, str):
            out.append({"type": "text", "text": item})
        elif isinstance(item, BinaryContent) and item.media_type.startswith("image/"):
            out.append({"source": {"data": base64.b64encode(item.data).decode(), "media_type": item.media_type, "type": "base64"}, "type": "image"})
        elif isinstance(item, BinaryContent) and item.media_type == "application/pdf":
            out.append({"source": {"data": base64.b64encode(item.data).decode(), "media_type": item.media_type, "type": "base64"}, "type": "document"})
        elif isinstance(item, BinaryContent) and item.media_type == "text/plain":
            out.append({"source": {"data": item.data.decode(), "media_type": item.media_type, "type": "text"}, "type": "document"})
        else:
            # pydantic-ai's Anthropic model raises for the rest (audio, video, other media).
            raise SystemExit(f"pydantic-ai adapter: a tool return item {item!r:.120} has no Anthropic block")
    return out


def _blocks(message):
    out = []
    if isinstance(message, ModelRequest):
        for p in message.parts:
            if isinstance(p, UserPromptPart):
                if isinstance(p.content, str):
                    out.append({"type": "text", "text": p.content})
                else:
                    out.extend({"type": "text", "text": str(c)} for c in p.content)
            elif isinstance(p, ToolReturnPart):
                # A string return stays the string it always was; a multi-part one (a
                # list) becomes the block array pydantic-ai's Anthropic model sends.
                content = _tool_return_blocks(p) if isinstance(p.content, list) else _tool_return_text(p)
                block = {"type": "tool_result", "tool_use_id": p.tool_call_id, "content": content}
                if p.outcome in ERROR_OUTCOMES:
                    block["is_error"] = True
                out.append(block)
            elif isinstance(p, RetryPromptPart):
                if p.tool_name is not None:
                    out.append({"type": "tool_result", "tool_use_id": p.tool_call_id, "content": p.model_response(), "is_error": True})
                else:
                    out.append({"type": "text", "text": p.model_response()})
            # System prompt parts and instruction bookkeeping travel in `system`.
        return "user", out
    for p in message.parts:
        if isinstance(p, TextPart):
            # As pydantic-ai's Anthropic model does (`_map_text_part`): an empty part is
            # skipped, a blank one ("\n\n") is sent as it is (docs/frameworks.md#pa-blank-text).
            if p.content:
                out.append({"type": "text", "text": p.content})
        elif isinstance(p, ToolCallPart):
            out.append({"type": "tool_use", "id": p.tool_call_id, "name": p.tool_name, "input": p.args_as_dict()})
        elif isinstance(p, ThinkingPart):
            # As pydantic-ai's Anthropic model does: an unsigned (interrupted) thinking
            # part goes back as tagged text, never as a thinking block the API refuses.
            if p.signature and p.id == "redacted_thinking":
                out.append({"type": "redacted_thinking", "data": p.signature})
            elif p.signature:
                out.append({"type": "thinking", "thinking": p.content, "signature": p.signature})
            elif p.content:
                out.append({"type": "text", "text": render_replayed_thinking(p.content, ModelProfile())[0]})
    return "assistant", out


class WireCache:
    """Maps each framework message to its wire message, the same object for as long as
    the framework's message (the same object) renders the same."""

    def __init__(self):
        self.cache = {}  # id(message) -> (message, rendered json, wire dict)

    def wire(self, messages):
        out = []
        for m in messages:
            role, blocks = _blocks(m)
            if not blocks:
                continue  # a message with nothing the wire can carry (e.g. only a system prompt)
            rendered = json.dumps([role, blocks], sort_keys=True)
            hit = self.cache.get(id(m))
            if hit is not None and hit[0] is m and hit[1] == rendered:
                out.append(hit[2])
                continue
            w = {"role": role, "content": blocks}
            self.cache[id(m)] = (m, rendered, w)
            out.append(w)
        return out


# --- the model -------------------------------------------------------------------------

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
    "refusal": "content_filter",
    "pause_turn": "stop",
}


class Generation:
    """One request in flight: the harness's events for it, in arrival order."""

    def __init__(self, op):
        self.op = op
        self.queue = asyncio.Queue()
        self.events = 0


@dataclass
class HarnessStream(StreamedResponse):
    """Turns the harness's Anthropic-style events into pydantic-ai stream events through
    the framework's own parts manager, as a provider integration does. A stream that
    breaks the event rules raises UnexpectedModelBehavior (the framework's exception
    for a model that misbehaves)."""

    gen: Generation = None
    _name: str = "turnsim"
    _started: bool = field(default=False, init=False)
    _open: dict = field(default_factory=dict, init=False)
    _stopped: set = field(default_factory=set, init=False)

    async def _get_event_iterator(self):
        while True:
            e = await self.gen.queue.get()
            kind = e["event"]
            if kind == "error":
                raise ModelHTTPError(529 if e.get("kind") == "overloaded_error" else 500, self._name, {"type": e.get("kind"), "message": e.get("message")})
            if kind == "message_start":
                if self._started:
                    raise UnexpectedModelBehavior("stream: message_start twice")
                self._started = True
                continue
            if not self._started:
                raise UnexpectedModelBehavior(f"stream: {kind} before message_start")
            if kind == "block_start":
                i, block = e["index"], e["block"]
                if i in self._open or i in self._stopped:
                    raise UnexpectedModelBehavior(f"stream: block {i} started twice")
                self._open[i] = block["type"]
                if block["type"] == "tool_use":
                    for ev in self._parts_manager.handle_tool_call_delta_events(
                        vendor_part_id=i, tool_name=block["name"], args="", tool_call_id=block["id"]
                    ):
                        yield ev
                elif block["type"] == "redacted_thinking":
                    for ev in self._parts_manager.handle_thinking_delta(vendor_part_id=i, id="redacted_thinking", content="", signature=block.get("data", "")):
                        yield ev
                continue
            if kind == "message_delta":
                self.finish_reason = _FINISH.get(e.get("stop_reason"))
                self.provider_details = {"stop_reason": e.get("stop_reason")}
                u = e.get("usage") or {}
                self._usage = RequestUsage(input_tokens=u.get("input_tokens", 0), output_tokens=u.get("output_tokens", 0))
                continue
            if kind == "message_stop":
                if self._open:
                    raise UnexpectedModelBehavior(f"stream: message_stop before block {min(self._open)} stopped")
                if self.finish_reason is None and "stop_reason" not in (self.provider_details or {}):
                    raise UnexpectedModelBehavior("stream: message_stop without a stop reason")
                return
            i = e.get("index")
            if i not in self._open:
                raise UnexpectedModelBehavior(f"stream: {kind} for block {i}, which is not open")
            btype = self._open[i]
            if kind == "block_stop":
                del self._open[i]
                self._stopped.add(i)
                if btype == "tool_use":
                    # The wire needs JSON input; a provider integration refuses the rest.
                    part = self._parts_manager.get_parts()
                    for p in part:
                        if isinstance(p, ToolCallPart) and isinstance(p.args, str) and p.args:
                            try:
                                json.loads(p.args)
                            except ValueError:
                                raise UnexpectedModelBehavior(f"stream: tool_use {p.tool_call_id}: input is not JSON")
            elif kind == "text_delta" and btype == "text":
                for ev in self._parts_manager.handle_text_delta(vendor_part_id=i, content=e["text"]):
                    yield ev
            elif kind == "thinking_delta" and btype == "thinking":
                for ev in self._parts_manager.handle_thinking_delta(vendor_part_id=i, content=e["thinking"]):
                    yield ev
            elif kind == "signature_delta" and btype == "thinking":
                for ev in self._parts_manager.handle_thinking_delta(vendor_part_id=i, signature=e["signature"]):
                    yield ev
            elif kind == "input_json_delta" and btype == "tool_use":
                for ev in self._parts_manager.handle_tool_call_delta_events(vendor_part_id=i, args=e["partial_json"]):
                    yield ev
            else:
                raise UnexpectedModelBehavior(f"stream: {kind} for a {btype} block")

    async def close_stream(self):
        return None

    @property
    def model_name(self):
        return self._name

    @property
    def provider_name(self):
        return "turnsim"

    @property
    def provider_url(self):
        return None

    @property
    def timestamp(self):
        return EPOCH


class HarnessModel(Model):
    """A pydantic-ai `Model` whose provider is the harness: `on_request(messages,
    params)` records and sends the request and returns the Generation its events will
    arrive on."""

    def __init__(self, on_request, on_end):
        super().__init__()
        self.on_request = on_request
        self.on_end = on_end

    @property
    def model_name(self):
        return "turnsim"

    @property
    def system(self):
        return "turnsim"

    async def request(self, messages, model_settings, model_request_parameters):
        raise UnexpectedModelBehavior("this adapter streams every request (Agent.iter with node.stream)")

    @asynccontextmanager
    async def request_stream(self, messages, model_settings, model_request_parameters, run_context=None):
        model_settings, model_request_parameters = self.prepare_request(model_settings, model_request_parameters)
        gen = self.on_request(messages, model_request_parameters)
        try:
            yield HarnessStream(model_request_parameters=model_request_parameters, gen=gen)
        finally:
            self.on_end(gen)
