"""The rules of turnsim's reference engine (core/src), ported: history validation,
markers and notes, request assembly, the durable log and crash recovery.

Guarantee: every text the engine authors (interruption markers, cancel phrases, the
tool-in-flight note, the interrupted-result text, the truncation resume prompt, the
compaction notice, the turn context) is the reference engine's text byte for byte,
because turnsim's checkers accept exactly those; and every check here returns an
error string before anything is changed, so a refused call leaves no trace.
Messages are Anthropic wire JSON (dicts) and are never mutated once built.
"""

import json

from turnsim_engine import compact_encoder

TRUNCATION_RESUME_TEXT = "[Reply cut off at the output limit. Resume exactly where it stopped.]"
INTERRUPTED_RESULT_TEXT = (
    "Interrupted before the outcome was saved; effects are unknown. "
    "Inspect external state before retrying this action."
)
RECOVERY_NOTE_PHRASE = "Canceled"
COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]"
TURN_CONTEXT_OPEN = "<turn_context>"
UNRECOGNISED_TOOL = "(an unrecognised tool)"

MARKERS = {
    "user": "[Request interrupted by user]",
    "cost_cap": "[Request interrupted: session cost cap reached]",
    "restart": "[Request interrupted: runtime restarted]",
    "host": "[Request interrupted: session stopped by the host]",
    "unknown": "[Request interrupted]",
    "crash": "[Request interrupted: runtime stopped unexpectedly]",
    "driver": "[Request interrupted: session driver revoked]",
}
MARKER_TEXTS = frozenset(MARKERS.values())

PHRASES = {
    "user": "Canceled by user",
    "cost_cap": "Canceled (session cost cap reached)",
    "restart": "Canceled (runtime restarted)",
    "host": "Canceled (session stopped by the host)",
    "driver": "Canceled (session driver revoked)",
}

# Rust's `str::trim` trims Unicode White_Space; Python's `str.strip()` also trims
# \x1c-\x1f, so the set is spelled out.
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


# One encoder for the whole process (turnsim_engine.compact_encoder says why): this
# runs several times per protocol line (log records, state).
_encode = compact_encoder()


def dumps(value):
    return _encode(value)


def user_text(text):
    return {"role": "user", "content": text}


def user_blocks(blocks):
    return {"role": "user", "content": blocks}


def assistant_blocks(blocks):
    return {"role": "assistant", "content": blocks}


def text_block(text):
    return {"type": "text", "text": text}


def result_block(tool_use_id, content, is_error):
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def blocks_of(message):
    content = message["content"]
    return content if isinstance(content, list) else []


def tool_calls(message):
    return [
        {"id": b["id"], "name": b["name"], "input": b["input"]}
        for b in blocks_of(message)
        if b.get("type") == "tool_use"
    ]


def tool_use_ids(messages):
    """The ids of the tool_use blocks in `messages`."""
    return [b["id"] for m in messages for b in blocks_of(m) if b.get("type") == "tool_use"]


def is_marker(message):
    c = message["content"]
    return message["role"] == "user" and isinstance(c, str) and c in MARKER_TEXTS


def append_marker(history, reason):
    if history and is_marker(history[-1]):
        return False
    history.append(user_text(MARKERS[reason]))
    return True


def plausible_tool_name(name):
    return 1 <= len(name.encode("utf-8")) <= 128 and all(
        c.isascii() and (c.isalnum() or c in "_.:-") for c in name
    )


def note_text(phrase, names):
    shown = [f"`{n}`" if plausible_tool_name(n) else UNRECOGNISED_TOOL for n in names]
    if len(names) == 1:
        head = " while the tool call "
        tail = " was running. It may have already started and partially applied its effects."
    else:
        head = " while the tool calls "
        tail = " were running. They may have already started and partially applied their effects."
    return f"[{phrase}{head}{', '.join(shown)}{tail}]"


def validate(messages, allow_pending=False):
    """None when the provider accepts `messages`, else what is wrong (spec §2)."""
    seen = {}
    asked = None
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            if asked is not None:
                return (
                    f"message {asked[0]}: tool call {asked[1][0]} is followed by assistant "
                    f"message {asked[0] + 1} instead of a user message answering it"
                )
            if len(m["content"]) == 0:
                return f"message {i}: assistant message has empty content"
            ids = []
            for j, b in enumerate(blocks_of(m)):
                kind = b.get("type")
                if kind == "tool_use":
                    if b["id"] in seen:
                        return f"message {i}, block {j}: tool_use id {b['id']} is already used by message {seen[b['id']]}"
                    seen[b["id"]] = i
                    ids.append(b["id"])
                elif kind == "tool_result":
                    return f"message {i}, block {j}: tool_result for {b['tool_use_id']} in an assistant message"
            asked = (i, ids) if ids else None
            continue
        previous, asked = asked, None
        blocks = blocks_of(m)
        asked_ids = set()
        if previous is not None:
            answered = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
            for tool_use_id in previous[1]:
                if tool_use_id not in answered:
                    return f"message {previous[0]}: tool call {tool_use_id} has no tool_result in message {previous[0] + 1}"
            asked_ids = set(previous[1])
        so_far = set()
        other = False
        for j, b in enumerate(blocks):
            kind = b.get("type")
            if kind == "tool_result":
                tid = b["tool_use_id"]
                if tid not in asked_ids:
                    return f"message {i}, block {j}: tool_result for {tid} answers no tool call of the message before"
                if tid in so_far:
                    return f"message {i}, block {j}: tool_result for {tid} answers it a second time"
                so_far.add(tid)
                if other:
                    return f"message {i}, block {j}: tool_result for {tid} comes after a block that is not a tool_result"
            elif kind == "tool_use":
                return f"message {i}, block {j}: tool_use {b['id']} in a user message"
            else:
                other = True
    if asked is not None and not allow_pending:
        return f"message {asked[0]}: history ends with unanswered tool calls {', '.join(asked[1])}"
    return None


def repair_after_failure(history, baseline):
    """Drops trailing messages of the turn a provider would refuse to continue from."""

    def valid_trailing(m):
        if m["role"] == "user":
            return True
        c = m["content"]
        if isinstance(c, str):
            return c != ""
        return bool(c) and not any(b.get("type") == "tool_use" for b in c)

    while len(history) > baseline and not valid_trailing(history[-1]):
        history.pop()


def turn_context_block(now, stance, hidden):
    s = f"{TURN_CONTEXT_OPEN}\n<now>{now}</now>\n<stance>{stance}</stance>\n"
    if hidden:
        s += "<conversation_thread>\n"
        for d in hidden:
            s += f"<directive>{d}</directive>\n"
        s += "</conversation_thread>\n"
    return s + "</turn_context>"


def directive_words(m):
    if m["role"] != "user":
        return None
    c = m["content"]
    if (
        isinstance(c, list)
        and len(c) == 2
        and c[0].get("type") == "text"
        and c[1].get("type") == "text"
        and c[0]["text"].startswith(TURN_CONTEXT_OPEN)
    ):
        return c[1]["text"]
    return None


def hidden_directives(compacted, visible):
    def present(d):
        for m in visible:
            c = m["content"]
            if isinstance(c, str):
                if c == d:
                    return True
            elif any(b.get("type") == "text" and b.get("text") == d for b in c):
                return True
        return False

    out = []
    for d in compacted:
        if not present(d) and d not in out:
            out.append(d)
    return out


def cache_breakpoints(baseline, count):
    points = [{"after_message": None}]
    for i in ([baseline - 1] if baseline > 0 else []) + ([count - 1] if count > 0 else []):
        p = {"after_message": i}
        if p not in points:
            points.append(p)
    return points


def recover_crashed_turn(history, draft_base_len, partial_text):
    if not history:
        return
    last = history[-1]
    if last["role"] == "assistant" or is_marker(last):
        return
    if draft_base_len == len(history) and partial_text.strip(WHITE_SPACE):
        history.append(assistant_blocks([text_block(partial_text)]))
    history.append(user_text(MARKERS["crash"]))


def recover_checkpoint(history, pending, finished):
    """Accounts for the operation outstanding at a crash; returns an error or None.
    Nothing is reissued: a tool without a saved result is answered as interrupted and
    named in a note, since it may have had effects."""
    kind = pending["pending"]
    if kind == "none":
        return None
    if kind == "generation":
        err = validate(history)
        if err:
            return f"invalid history: {err}"
        append_marker(history, "crash")
        return None
    calls = pending["calls"]
    asked = [c["id"] for c in tool_calls(history[-1])] if history else []
    if asked != [c["id"] for c in calls]:
        return f"pending op#{pending['op']} names calls the history does not end with"
    err = validate(history, allow_pending=True)
    if err:
        return f"invalid history: {err}"
    blocks, unknown = [], []
    for call in calls:
        done = next((r for r in finished if r["tool_use_id"] == call["id"]), None)
        if done is not None:
            blocks.append(result_block(done["tool_use_id"], done["content"], done["is_error"]))
        else:
            unknown.append(call["name"])
            blocks.append(result_block(call["id"], INTERRUPTED_RESULT_TEXT, True))
    history.append(user_blocks(blocks))
    if unknown:
        history.append(user_text(note_text(RECOVERY_NOTE_PHRASE, unknown)))
    append_marker(history, "crash")
    return None
