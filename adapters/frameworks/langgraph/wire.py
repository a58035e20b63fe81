"""LangChain messages in the Anthropic Messages API form turnsim judges, rendered as
langchain-anthropic renders a conversation for the API.

Guarantee: the wire form is a pure function of the framework's own messages, and the
same run of framework message objects, unchanged, always maps to the very same wire
object, so turnsim's identity checks see exactly what LangGraph kept or rebuilt. The
rendering follows langchain-anthropic: the system message travels apart; consecutive
human and tool messages make one user message (tool results first, as they come); a
lone human message with string content stays a string; an AI message's content
blocks (text, thinking, redacted thinking) go in order without LangChain's `index`
key, empty text dropped, then one `tool_use` per tool call. Adapter, not framework.
"""

import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage


def _tool_result(m: ToolMessage):
    content = m.content if isinstance(m.content, str) else [_plain(b) for b in m.content]
    block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": content}
    if m.status == "error":
        block["is_error"] = True
    return block


def _plain(block):
    if isinstance(block, str):
        return {"type": "text", "text": block}
    return {k: v for k, v in block.items() if k != "index"}


def _user_blocks(m):
    if isinstance(m, ToolMessage):
        return [_tool_result(m)]
    if isinstance(m.content, str):
        return [{"type": "text", "text": m.content}]
    return [_plain(b) for b in m.content]


def _assistant_blocks(m: AIMessage):
    out = []
    content = [m.content] if isinstance(m.content, str) else m.content
    for b in content:
        b = _plain(b)
        kind = b.get("type")
        if kind == "text" and b.get("text"):
            out.append({"type": "text", "text": b["text"]})
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": b.get("thinking", "")}
            if "signature" in b:
                block["signature"] = b["signature"]
            out.append(block)
        elif kind == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": b.get("data", "")})
    for call in m.tool_calls:
        out.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]})
    return out


def groups(messages):
    """The framework's messages grouped as the wire carries them: [(role, [message, …])]."""
    out = []
    for m in messages:
        if isinstance(m, SystemMessage):
            continue
        role = "assistant" if isinstance(m, AIMessage) else "user"
        if role == "user" and out and out[-1][0] == "user":
            out[-1][1].append(m)
        else:
            out.append((role, [m]))
    return out


class WireCache:
    """Maps each run of framework messages to its wire message, the same object for as
    long as the same message objects render the same."""

    def __init__(self):
        self.cache = {}  # ids of the source messages -> (sources, rendered json, wire dict)

    def wire(self, messages):
        out = []
        for role, ms in groups(messages):
            if role == "assistant":
                content = _assistant_blocks(ms[0])
            elif len(ms) == 1 and isinstance(ms[0], HumanMessage) and isinstance(ms[0].content, str):
                content = ms[0].content
            else:
                content = [b for m in ms for b in _user_blocks(m)]
            rendered = json.dumps([role, content], sort_keys=True)
            key = tuple(id(m) for m in ms)
            hit = self.cache.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], ms)) and hit[1] == rendered:
                out.append(hit[2])
                continue
            w = {"role": role, "content": content}
            self.cache[key] = (list(ms), rendered, w)
            out.append(w)
        return out
