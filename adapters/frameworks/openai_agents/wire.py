"""The wire form turnsim judges: the SDK's Responses input items as Anthropic messages.

Guarantee: a pure function of the SDK's own items, so turnsim sees exactly what the
SDK keeps and sends. Consecutive items of one role make one message (the Messages API
joins consecutive turns of a role anyway): an assistant reply's reasoning, text and
function calls become one assistant message, and function outputs followed by the next
prompt one user message. A reasoning item goes out as its native thinking blocks
(`provider_data["thinking_blocks"]`, the SDK's convention for Claude), a function call
as `tool_use` with its call id, a function output as `tool_result` (the Responses item
has no error flag, so none is sent). Text that is empty or only whitespace is left
out: the SDK keeps such output items and hands them to whichever model integration
runs (the Responses API takes them), and an integration in front of the Messages API,
which refuses blank text, must drop them, as the SDK's LiteLLM extension does
(`_sanitize_empty_text_content`, read in litellm 1.110.2). Rendering an equal sequence
of items twice gives the same message object (WireCache), which only saves the harness
work: the protocol judges rebuilt messages by content. Adapter, not framework.
"""

import json


def _plain(item):
    return item if isinstance(item, dict) else item.model_dump(exclude_unset=True, mode="json")


def _text_blocks(content, kinds):
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    out = []
    for c in content:
        c = _plain(c)
        if c.get("type") in kinds and (c.get("text") or "").strip():
            out.append({"type": "text", "text": c["text"]})
        elif c.get("type") == "refusal" and c.get("refusal"):
            out.append({"type": "text", "text": c["refusal"]})
    return out


def role_blocks(item):
    """(role, blocks) of one item; role None for an item the wire does not carry."""
    it = _plain(item)
    kind = it.get("type")
    if kind in (None, "message") and it.get("role") in ("user", "assistant"):
        kinds = ("input_text",) if it["role"] == "user" else ("output_text", "input_text")
        return it["role"], _text_blocks(it.get("content", ""), kinds)
    if kind == "function_call":
        args = it.get("arguments") or "{}"
        return "assistant", [{"type": "tool_use", "id": it["call_id"], "name": it["name"], "input": json.loads(args)}]
    if kind == "function_call_output":
        out = it.get("output")
        if not isinstance(out, str):
            out = "".join(b["text"] for b in _text_blocks(out, ("input_text", "output_text")))
        return "user", [{"type": "tool_result", "tool_use_id": it["call_id"], "content": out}]
    if kind == "reasoning":
        native = (it.get("provider_data") or {}).get("thinking_blocks")
        return "assistant", [dict(b) for b in native or []]
    return None, []


class WireCache:
    def __init__(self):
        self.cache = {}  # rendered JSON -> wire message

    def wire(self, items):
        groups = []  # [role, blocks]
        for item in items:
            role, blocks = role_blocks(item)
            if role is None:
                continue
            if groups and groups[-1][0] == role:
                groups[-1][1].extend(blocks)
            else:
                groups.append([role, list(blocks)])
        out = []
        for n, (role, blocks) in enumerate(groups):
            if not blocks:
                continue
            key = json.dumps([n, role, blocks], sort_keys=True)
            w = self.cache.get(key)
            if w is None:
                w = self.cache[key] = {"role": role, "content": blocks}
            out.append(w)
        return out
