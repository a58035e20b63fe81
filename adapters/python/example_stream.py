"""The example engine's streamed reply (example_engine.py): the Anthropic stream
events of one generation folded into content blocks.

Guarantee: an event that breaks the stream's rules (a delta for a block that never
started or already stopped, a second message_start, tool input that is not JSON, a
stop without a stop reason) raises Invalid before anything changes, so the session
can fail the generation cleanly; a block survives a cancel only as the reference
engine keeps it (finished, or streamed text cut short).
"""

import json

import reference_port as rp


class Invalid(Exception):
    """A response the state machine refuses (the reference's InvalidResponse)."""


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


# Built once: json.loads with an option builds a decoder per call.
_strict = json.JSONDecoder(parse_constant=_no_constants)


def parse_json(text):
    """json.loads(text, parse_constant=_no_constants)."""
    if text.startswith("\ufeff"):
        # json.loads's own error for it.
        return json.loads(text, parse_constant=_no_constants)
    return _strict.decode(text)


class Stream:
    """The reply being streamed."""

    def __init__(self, op):
        self.op = op
        self.started = False
        self.blocks = []
        self.stop = None

    def block(self, index):
        if index < len(self.blocks):
            b = self.blocks[index]
            if b["done"]:
                raise Invalid(f"delta for block {index} after its stop")
            return b
        raise Invalid(f"delta for block {index}, which never started")

    def apply(self, e):
        """Applies one event; returns streamed text to persist in the draft."""
        kind = e["event"]
        # Tested in the order of how often they come (tool input deltas most).
        if kind == "input_json_delta":
            b = self.block(e["index"])
            if b["kind"]["type"] != "tool_use":
                raise Invalid(f"input delta for block {e['index']}, not a tool_use")
            b["json"] += e["partial_json"]
        elif kind == "text_delta":
            b = self.block(e["index"])
            if b["kind"]["type"] != "text":
                raise Invalid(f"text delta for block {e['index']}, not a text block")
            b["text"] += e["text"]
            return e["text"]
        elif kind == "block_start":
            if e["index"] != len(self.blocks):
                raise Invalid(f"block {e['index']} started, expected block {len(self.blocks)}")
            self.blocks.append({"kind": e["block"], "text": "", "signature": "", "json": "", "done": False})
        elif kind == "block_stop":
            b = self.block(e["index"])
            if b["kind"]["type"] == "tool_use":
                try:
                    parse_json(b["json"] or "{}")
                except ValueError as err:
                    raise Invalid(f"tool_use {b['kind']['id']}: input is not JSON: {err}")
            b["done"] = True
        elif kind in ("thinking_delta", "signature_delta"):
            b = self.block(e["index"])
            if b["kind"]["type"] != "thinking":
                raise Invalid(f"{kind} for block {e['index']}, not thinking")
            if kind == "thinking_delta":
                b["text"] += e["thinking"]
            else:
                b["signature"] += e["signature"]
        elif kind == "message_start":
            if self.started:
                raise Invalid("message_start twice")
            self.started = True
        elif kind == "message_delta":
            self.stop = (e["stop_reason"], e["usage"])
        return None

    def kept_blocks(self, partial):
        """Finished blocks, plus streamed text cut short on a cancel."""
        out = []
        for b in self.blocks:
            kind = b["kind"]["type"]
            # Blank text is never kept, finished or cut: the API refuses a
            # whitespace-only text block in every later request (spec §7, "Blank text").
            keep_text = b["text"].strip(rp.WHITE_SPACE) != "" and (partial or b["done"])
            if kind == "text" and keep_text:
                out.append(rp.text_block(b["text"]))
            elif kind == "thinking" and b["done"] and b["signature"]:
                out.append({"type": "thinking", "thinking": b["text"], "signature": b["signature"]})
            elif kind == "redacted_thinking" and b["done"]:
                out.append({"type": "redacted_thinking", "data": b["kind"]["data"]})
            elif kind == "tool_use" and b["done"]:
                try:
                    value = parse_json(b["json"] or "{}")
                except ValueError:
                    value = None
                out.append({"type": "tool_use", "id": b["kind"]["id"], "name": b["kind"]["name"], "input": value})
        return out

    def finish(self):
        for i, b in enumerate(self.blocks):
            if not b["done"]:
                raise Invalid(f"message_stop before block {i} stopped")
        if self.stop is None:
            raise Invalid("message_stop without a stop reason")
        return rp.assistant_blocks(self.kept_blocks(False)), self.stop[0], self.stop[1]

    def view(self):
        return [self.op, self.started, self.blocks, self.stop]
