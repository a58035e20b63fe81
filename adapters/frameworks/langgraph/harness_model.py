"""The adapter's chat model: a langchain-core `BaseChatModel` whose provider is the
harness. Each request goes out as one `send` (through `on_request`, which records it
in the log first) and its stream is the harness's `stream` inputs, relayed as
`AIMessageChunk`s the way an Anthropic integration streams: content blocks carrying
their `index` (text, thinking, redacted thinking) and `tool_call_chunks` for tool use,
the stop reason and usage in the metadata.

Guarantee: nothing here decides what the turn does. The model relays exactly the
events the harness streams, in order, and fails the generation (raises) on a stream
that breaks the event rules or reports a provider error, as a provider integration
does; message ids come from the request's op (the provider's message id, an injection
point langchain-core honours), never from a random run id. Everything in this file is
adapter, not framework; it is what a LangGraph user who plugs in their own provider
writes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

from langchain_core.language_models.chat_models import BaseChatModel, agenerate_from_stream
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict


class ProviderError(Exception):
    """The provider answered the stream with an error event (overloaded, server error)."""


class MalformedStream(Exception):
    """The stream broke the event rules; a provider integration refuses it."""


class Generation:
    """One request in flight: the harness's events for it, in arrival order."""

    def __init__(self, op):
        self.op = op
        self.queue = asyncio.Queue()


def anthropic_tool(tool):
    """A bound tool in the Anthropic form (as langchain-anthropic converts tools)."""
    fn = convert_to_openai_tool(tool)["function"]
    return {"name": fn["name"], "description": fn.get("description", ""), "input_schema": fn.get("parameters") or {"type": "object"}}


class HarnessChatModel(BaseChatModel):
    """`on_request(messages, tools) -> Generation` records and sends a request;
    `on_end(gen)` is told when its stream is no longer read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    on_request: Callable[..., Generation]
    on_end: Callable[[Generation], None]

    @property
    def _llm_type(self) -> str:
        return "turnsim-harness"

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        return self.bind(tools=[anthropic_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        raise NotImplementedError("the harness's provider only streams, and only on the event loop")

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        return await agenerate_from_stream(self._astream(messages, stop=stop, run_manager=run_manager, **kwargs))

    async def _astream(self, messages, stop=None, run_manager=None, tools=(), **kwargs):
        gen = self.on_request(messages, list(tools))
        try:
            async for chunk in relay(gen):
                yield chunk
        finally:
            self.on_end(gen)


_TEXT_KEYS = {"text": "text", "thinking": "thinking"}


async def relay(gen: Generation):
    """The harness's Anthropic-style events as chunks, validated as they arrive."""
    msg_id = f"msg_turnsim_{gen.op}"
    started, stopped_reason = False, False
    open_blocks: dict[int, dict[str, Any]] = {}
    closed: set[int] = set()

    def chunk(**fields):
        return ChatGenerationChunk(message=AIMessageChunk(id=msg_id, **fields))

    while True:
        e = await gen.queue.get()
        kind = e["event"]
        if kind == "error":
            raise ProviderError(f"{e.get('kind')}: {e.get('message')}")
        if kind == "message_start":
            if started:
                raise MalformedStream("message_start twice")
            started = True
            continue
        if not started:
            raise MalformedStream(f"{kind} before message_start")
        if kind == "message_delta":
            stopped_reason = "stop_reason" in e and e["stop_reason"] is not None
            u = e.get("usage") or {}
            inp, out = u.get("input_tokens", 0), u.get("output_tokens", 0)
            yield chunk(
                content=[],
                response_metadata={"stop_reason": e.get("stop_reason")},
                usage_metadata={"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out},
            )
            continue
        if kind == "message_stop":
            if open_blocks:
                raise MalformedStream(f"message_stop before block {min(open_blocks)} stopped")
            if not stopped_reason:
                raise MalformedStream("message_stop without a stop reason")
            return
        i = e.get("index")
        if kind == "block_start":
            if i in open_blocks or i in closed:
                raise MalformedStream(f"block {i} started twice")
            block = e["block"]
            open_blocks[i] = {"type": block["type"], "json": ""}
            if block["type"] == "tool_use":
                yield chunk(content=[], tool_call_chunks=[{"name": block["name"], "id": block["id"], "args": "", "index": i}])
            elif block["type"] == "redacted_thinking":
                yield chunk(content=[{"type": "redacted_thinking", "data": block.get("data", ""), "index": i}])
            elif block["type"] in _TEXT_KEYS:
                yield chunk(content=[{"type": block["type"], _TEXT_KEYS[block["type"]]: "", "index": i}])
            continue
        if i not in open_blocks:
            raise MalformedStream(f"{kind} for block {i}, which is not open")
        b = open_blocks[i]
        btype = b["type"]
        if kind == "block_stop":
            del open_blocks[i]
            closed.add(i)
            if btype == "tool_use" and b["json"]:
                try:
                    json.loads(b["json"])
                except ValueError:
                    raise MalformedStream(f"tool_use block {i}: input is not JSON")
        elif kind == "text_delta" and btype == "text":
            yield chunk(content=[{"type": "text", "text": e["text"], "index": i}])
        elif kind == "thinking_delta" and btype == "thinking":
            yield chunk(content=[{"type": "thinking", "thinking": e["thinking"], "index": i}])
        elif kind == "signature_delta" and btype == "thinking":
            yield chunk(content=[{"type": "thinking", "signature": e["signature"], "index": i}])
        elif kind == "input_json_delta" and btype == "tool_use":
            b["json"] += e["partial_json"]
            yield chunk(content=[], tool_call_chunks=[{"name": None, "id": None, "args": e["partial_json"], "index": i}])
        else:
            raise MalformedStream(f"{kind} for a {btype} block")
