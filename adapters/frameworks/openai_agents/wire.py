"""The wire form turnsim judges: the SDK's Responses input items as Anthropic messages.

Guarantee: a pure function of the SDK's own items, so turnsim sees exactly what the
SDK keeps and sends. Consecutive items of one role make one message (the Messages API
joins consecutive turns of a role anyway): an assistant reply's reasoning, text and
function calls become one assistant message, and function outputs followed by the next
prompt one user message. A reasoning item goes out as its native thinking blocks
(`provider_data["thinking_blocks"]`, the SDK's convention for Claude), a function call
as `tool_use` with its call id, a function output as `tool_result` (the Responses item
has no error flag, so none is sent), a structured output's parts as that result's
block array. Text that is empty or only whitespace is left out: the SDK keeps such
output items and hands them to whichever model integration runs (the Responses API
takes them), and an integration in front of the Messages API, which refuses blank
text, must drop them, as the SDK's LiteLLM extension does
(`_sanitize_empty_text_content`, read in litellm 1.110.2). Rendering an equal sequence
of items twice gives the same message object (WireCache), which only saves the harness
work: the protocol judges rebuilt messages by content. Adapter, not framework.
"""

import base64
import json

from agents import ToolOutputFileContent, ToolOutputImage, ToolOutputText


def tool_output(content):
    """A tool outcome's `content` as the tool returns it to the SDK: a string as it is,
    an array of blocks as the SDK's own structured outputs, a `ToolOutputText` per text
    block, a `ToolOutputImage` per image and a `ToolOutputFileContent` per document, the
    bytes carried as a `data:` URL (the one form of `image_url` and `file_data` that
    keeps the media type). The SDK turns the list into the function output's
    `input_text` / `input_image` / `input_file` parts; what it keeps is its own doing."""
    if isinstance(content, str):
        return content
    return [_output_part(b) for b in content]


def _output_part(block):
    kind, source = block.get("type"), block.get("source") or {}
    if kind == "text":
        return ToolOutputText(text=block["text"])
    if source.get("type") == "base64":
        url = f"data:{source['media_type']};base64,{source['data']}"
    elif kind == "document" and source.get("type") == "text":
        data = base64.b64encode(source["data"].encode()).decode()
        url = f"data:{source.get('media_type', 'text/plain')};base64,{data}"
    else:
        raise SystemExit(f"openai-agents adapter: a tool result block {json.dumps(block)[:120]} has no SDK tool output type (expected text, a base64 image or document, or a text document)")
    if kind == "image":
        return ToolOutputImage(image_url=url)
    if kind == "document":
        return ToolOutputFileContent(file_data=url)
    raise SystemExit(f"openai-agents adapter: a tool result block of type {kind!r} has no SDK tool output type")


def _data_url(url):
    """(media type, base64 data) of a `data:` URL, None for any other URL."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    media_type, data = url[len("data:") :].split(";base64,", 1)
    return media_type, data


def _output_blocks(parts):
    """A function output's parts as Messages-API blocks inside the tool_result, each in
    its order and kept whole: text as text, an image's `data:` URL back to a base64
    image source, a file's `data:` URL to a document (a plain-text one with a text
    source, the only form the API takes for it; a PDF base64). Adapter: the SDK hands
    these parts to the model integration as they are."""
    out = []
    for c in parts:
        c = _plain(c)
        kind = c.get("type")
        if kind == "input_text":
            out.append({"type": "text", "text": c["text"]})
        elif kind == "input_image" and _data_url(c.get("image_url") or ""):
            media_type, data = _data_url(c["image_url"])
            out.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        elif kind == "input_file" and _data_url(c.get("file_data") or ""):
            media_type, data = _data_url(c["file_data"])
            if media_type == "text/plain":
                text = base64.b64decode(data, validate=True).decode()
                out.append({"type": "document", "source": {"type": "text", "media_type": media_type, "data": text}})
            else:
                out.append({"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}})
        else:
            raise SystemExit(f"openai-agents adapter: a function output part {json.dumps(c)[:120]} has no Messages-API block here")
    return out


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
            out = _output_blocks(out)
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
