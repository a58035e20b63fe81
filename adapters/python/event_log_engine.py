#!/usr/bin/env python3
"""Event-log engine: a turn engine of its own design, written from
docs/engine-protocol.md and docs/invariants.md alone, served over engine protocol v1
("python3 adapters/python/event_log_engine.py"). It exists to show that turnsim
judges a correct engine that is not the reference engine without false findings.

Design (deliberately unlike the reference engine):
- Event sourcing. Every change is an event; the durable log is one JSON event per
  line, and the engine's state is only ever the fold of its events (`apply`). The live
  engine applies the very events it persists, so a restore replays the same code
  path and cannot drift from what the live engine held.
- A failed generation (a provider error or a broken stream) is retried up to twice
  with the same request; nothing of a failed attempt is kept.
- Prompts are plain strings (no turn-context wrapping); the interruption record is
  this engine's own wording ("(turn stopped: cancelled by the user)"); there is no
  separate tool-in-flight note: a cut-short call's tool_result says it may have run.
- A reply that stops at max_tokens ends the turn (no automatic resume).
- A compaction leaves the notice and the user's standing prompts (verbatim, one text
  block each) as the first message, and the host's summary as the assistant's reply.

Guarantees: write-ahead (the event that describes an effect is persisted before the
send or dispatch); a stale or duplicate delivery returns no outputs and changes
nothing; a restore never reissues an operation, keeps every persisted prompt, result
and streamed text, and is idempotent; a torn last line is the only thing dropped, a
damaged middle line refuses the restore. Every tool_use id is unique in the session,
across compaction, rewind and restart (a repeated provider id is renamed).

TURNSIM_EXAMPLE_BUG plants one realistic bug (see adapters/DESIGNS.md):
cancel_records_nothing, orphan_on_cancel, stale_result_patches, retry_edits_history,
running_labelled_not_run, import_accepts_invalid.

An imported history (the protocol's `import`) is refused when the API would reject
it; a valid one becomes the session's history through one `import` event.
"""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from turnsim_engine import Refused, RestoreFailed, history_problem, run  # noqa: E402

BUGS = ("cancel_records_nothing", "orphan_on_cancel", "stale_result_patches", "retry_edits_history",
        "running_labelled_not_run", "import_accepts_invalid")
BUG = os.environ.get("TURNSIM_EXAMPLE_BUG", "")
if BUG and BUG not in BUGS:
    sys.exit(f"event_log_engine: unknown TURNSIM_EXAMPLE_BUG={BUG!r}; known: {', '.join(BUGS)}")

MAX_ATTEMPTS = 3  # the first try and two retries
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn")
CAUSES = {
    "user": "cancelled by the user",
    "cost_cap": "the session cost cap was reached",
    "restart": "the runtime restarted",
    "host": "the host stopped the session",
    "driver": "the session driver was revoked",
    "crash": "the runtime stopped unexpectedly",
    "unknown": "stopped for a reason this engine does not know",
}
LIVE_CAUSES = ("user", "cost_cap", "restart", "host", "driver")
SUMMARY_NOTICE = "(earlier conversation summarised; the summary follows)"


def record_text(cause):
    return f"(turn stopped: {CAUSES[cause]})"


def cut_short_text(cause):
    return f"(no result: {CAUSES[cause]} while this call was running; it may have partly run)"


NOT_STARTED = "(not run: the turn was stopped before this call started)"


def dumps(value):
    return json.dumps(value, separators=(",", ":"))


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def parse_json(text):
    return json.loads(text, parse_constant=_no_constants)


class BadStream(Exception):
    """The provider's stream broke the event model: the attempt fails."""


def _text(s):
    return isinstance(s, str)


class Attempt:
    """One generation attempt being streamed. Only text deltas are persisted (as they
    are what the user watched); the rest is rebuilt by the provider on a retry."""

    def __init__(self):
        self.started = False
        self.blocks = []
        self.stop = None

    def open_block(self, index, kinds):
        if not isinstance(index, int) or index >= len(self.blocks) or index < 0:
            raise BadStream(f"delta for block {index}, which never started")
        b = self.blocks[index]
        if b["closed"]:
            raise BadStream(f"delta for block {index} after its stop")
        if b["type"] not in kinds:
            raise BadStream(f"a {'/'.join(kinds)} delta for the {b['type']} block {index}")
        return b

    def apply(self, e, taken):
        """Applies one event. Returns True when the reply is complete."""
        kind = e.get("event")
        if kind == "error":
            raise BadStream(f"provider error {e.get('kind')}: {e.get('message')}")
        if kind == "message_start":
            if self.started:
                raise BadStream("a second message_start")
            self.started = True
            return False
        if not self.started:
            raise BadStream(f"{kind} before message_start")
        if kind == "block_start":
            index, block = e.get("index"), e.get("block") or {}
            if index != len(self.blocks):
                raise BadStream(f"block {index} started out of order")
            t = block.get("type")
            b = {"type": t, "closed": False}
            if t == "text":
                b["text"] = ""
            elif t == "thinking":
                b["thinking"], b["signature"] = "", ""
            elif t == "redacted_thinking" and _text(block.get("data")):
                b["data"] = block["data"]
            elif t == "tool_use" and _text(block.get("id")) and _text(block.get("name")):
                b["id"], b["name"], b["json"] = self.fresh_id(block["id"], taken), block["name"], ""
            else:
                raise BadStream(f"block {index}: unusable block {dumps(block)[:80]}")
            self.blocks.append(b)
        elif kind == "text_delta":
            self.open_block(e.get("index"), ("text",))["text"] += str(e.get("text", ""))
        elif kind == "thinking_delta":
            self.open_block(e.get("index"), ("thinking",))["thinking"] += str(e.get("thinking", ""))
        elif kind == "signature_delta":
            self.open_block(e.get("index"), ("thinking",))["signature"] += str(e.get("signature", ""))
        elif kind == "input_json_delta":
            self.open_block(e.get("index"), ("tool_use",))["json"] += str(e.get("partial_json", ""))
        elif kind == "block_stop":
            b = self.open_block(e.get("index"), ("text", "thinking", "redacted_thinking", "tool_use"))
            if b["type"] == "tool_use":
                try:
                    value = parse_json(b["json"]) if b["json"].strip() else {}
                except ValueError as err:
                    raise BadStream(f"tool input of block {e.get('index')} is not JSON: {err}")
                if not isinstance(value, dict):
                    raise BadStream(f"tool input of block {e.get('index')} is not an object")
                b["input"] = value
            b["closed"] = True
        elif kind == "message_delta":
            if e.get("stop_reason") not in STOP_REASONS:
                raise BadStream(f"stop reason {e.get('stop_reason')!r}")
            self.stop = e["stop_reason"]
        elif kind == "message_stop":
            if any(not b["closed"] for b in self.blocks):
                raise BadStream("message_stop before every block stopped")
            if self.stop is None:
                raise BadStream("message_stop without a stop reason")
            return True
        else:
            raise BadStream(f"unknown event {kind!r}")
        return False

    def fresh_id(self, wanted, taken):
        here = {b["id"] for b in self.blocks if b["type"] == "tool_use"}
        if wanted not in taken and wanted not in here:
            return wanted
        k = 2
        while f"{wanted}_r{k}" in taken or f"{wanted}_r{k}" in here:
            k += 1
        return f"{wanted}_r{k}"

    def message_blocks(self, finished_only):
        """The blocks worth keeping: all of a complete reply, or on a cancel the text
        streamed so far (finished or not) and the calls whose input finished."""
        out = []
        for b in self.blocks:
            t = b["type"]
            if t == "text" and b["text"].strip():
                if b["closed"] or not finished_only:
                    out.append({"type": "text", "text": b["text"]})
            elif t == "thinking" and b["closed"] and b["signature"] and finished_only:
                out.append({"type": "thinking", "thinking": b["thinking"], "signature": b["signature"]})
            elif t == "redacted_thinking" and b["closed"] and finished_only:
                out.append({"type": "redacted_thinking", "data": b["data"]})
            elif t == "tool_use" and b["closed"]:
                out.append({"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]})
        return out


def result_block(call_id, outcome):
    block = {"type": "tool_result", "tool_use_id": call_id, "content": outcome.get("content", "")}
    if outcome.get("is_error"):
        block["is_error"] = True
    return block


def calls_of(message):
    """The calls of an assistant message in the protocol's call shape."""
    return [{"id": b["id"], "name": b["name"], "input": b["input"]} for b in message["content"] if b.get("type") == "tool_use"]


def tool_ids(message):
    content = message["content"]
    if message["role"] != "assistant" or not isinstance(content, list):
        return []
    return [b["id"] for b in content if b.get("type") == "tool_use"]


class Engine:
    def __init__(self, config):
        self.system = config["system"]
        self.tools = config["tools"]
        self.key = config["session_key"]
        self.history = []
        self.phase = "idle"  # idle | gen | tools | open (turn open, nothing outstanding)
        self.op = 0  # the outstanding operation
        self.last_op = 0  # ops are never reused, restarts included
        self.attempts = 0
        self.calls = []
        self.results = {}
        self.drafts = {}  # block index -> text streamed by the current attempt
        self.taken = set()  # every tool_use id the session ever kept
        # The user's prompts that stand, each with the history index that holds it: a
        # compaction keeps their words (the summary is the host's, never a stand-in for
        # the user's own), a rewind drops those it cuts off.
        self.directives = []
        self.final = False  # the open turn's last reply ended it (or a cancel did)
        self.last_batch = None  # bug stale_result_patches: (op, history index)
        self.chain = ""
        self.attempt = None  # live only: the stream being assembled

    # -- the fold --------------------------------------------------------------
    def apply(self, ev):
        """The only code that changes durable state; run live and on restore."""
        e = ev["e"]
        self.chain = hashlib.sha256((self.chain + dumps(ev)).encode()).hexdigest()
        if "op" in ev:
            self.last_op = max(self.last_op, ev["op"])
        if e == "cfg":
            self.system, self.tools = ev["system"], ev["tools"]
        elif e == "turn":
            self.directives.append((ev["text"], len(self.history)))
            self.history.append({"role": "user", "content": ev["text"]})
            self.begin(ev["op"])
            self.final = False
        elif e in ("gen", "retry"):
            self.begin(ev["op"], self.attempts + 1 if e == "retry" else 1)
        elif e == "edit":
            self.history[ev["index"]] = ev["message"]
        elif e == "txt":
            if ev["op"] == self.op and self.phase == "gen":
                self.drafts[ev["i"]] = self.drafts.get(ev["i"], "") + ev["t"]
        elif e == "reply":
            self.history.append(ev["message"])
            self.taken.update(tool_ids(ev["message"]))
            self.drafts = {}
            if ev["tools_op"] is not None:
                self.phase, self.op = "tools", ev["tools_op"]
                self.calls = calls_of(ev["message"])
                self.results = {}
            else:
                self.phase, self.final = "open", True
        elif e == "res":
            self.results[ev["outcome"]["tool_use_id"]] = ev["outcome"]
            if len(self.results) == len(self.calls):
                self.history.append({"role": "user", "content": [result_block(c["id"], self.results[c["id"]]) for c in self.calls]})
                self.phase = "open"
        elif e == "stop":  # a cancel: what was kept, then the record
            for m in ev["messages"]:
                self.history.append(m)
                self.taken.update(tool_ids(m))
            if ev.get("batch") is not None:  # the batch's answers are the first kept message
                self.last_batch = (ev["batch"], len(self.history) - len(ev["messages"]))
            self.phase, self.final = "open", True
        elif e == "crash":
            self.history.extend(ev["messages"])
            self.phase, self.final = "open", True
        elif e == "end":
            self.phase, self.op, self.drafts = "idle", 0, {}
        elif e == "compact":
            # The notice, then every standing directive verbatim, each its own block.
            head = SUMMARY_NOTICE
            if self.directives:
                head = [{"type": "text", "text": t} for t in [SUMMARY_NOTICE] + [d for d, _ in self.directives]]
            self.directives = [(d, 0) for d, _ in self.directives]
            self.history = [{"role": "user", "content": head}, {"role": "assistant", "content": ev["summary"]}]
            self.last_batch = None
        elif e == "rewind":
            self.history = self.history[: ev["index"]]
            self.directives = [(d, i) for d, i in self.directives if i < ev["index"]]
            self.last_batch = None
        elif e == "import":
            self.history = list(ev["messages"])
            self.directives = []
            for m in self.history:
                self.taken.update(tool_ids(m))
        else:
            raise ValueError(f"unknown event {e!r}")

    def begin(self, op, attempts=1):
        self.phase, self.op, self.attempts, self.drafts = "gen", op, attempts, {}

    # -- protocol surface -------------------------------------------------------
    def pending(self):
        if self.phase == "gen":
            return {"pending": "generation", "op": self.op}
        if self.phase == "tools":
            return {"pending": "tools", "op": self.op, "calls": self.calls}
        return {"pending": "none"}

    def idle(self):
        return self.phase == "idle"

    def state(self):
        live = None
        if self.attempt is not None:
            live = [self.attempt.started, self.attempt.stop, self.attempt.blocks]
        return hashlib.sha256((self.chain + dumps(live)).encode()).hexdigest()

    def fixed_texts(self):
        return [SUMMARY_NOTICE]

    # -- inputs -----------------------------------------------------------------
    def emit(self, outputs, *events):
        for ev in events:
            self.apply(ev)
            outputs.append({"output": "persist", "bytes": (dumps(ev) + "\n").encode()})

    def new_op(self):
        return self.last_op + 1

    def request(self):
        return {
            "system": self.system,
            "tools": self.tools,
            "messages": list(self.history),
            "cache": {"session_key": self.key, "breakpoints": [{"after_message": len(self.history) - 1}]},
        }

    def send(self, outputs):
        self.attempt = Attempt()
        outputs.append({"output": "send", "op": self.op, "request": self.request()})

    def handle(self, inp):
        kind = inp.get("input")
        if kind == "stream":
            return self.on_stream(inp["op"], inp["event"])
        if kind == "tool_result":
            return self.on_result(inp["op"], inp["outcome"])
        if kind == "cancel":
            return self.on_cancel(inp["cause"])
        if self.phase != "idle":
            raise Refused(f"{kind} while a turn is open")
        out = []
        if kind == "prompt":
            if not _text(inp.get("text")) or inp["text"] == "":
                raise Refused("an empty prompt")
            self.emit(out, {"e": "turn", "text": inp["text"], "op": self.new_op()})
            self.send(out)
        elif kind == "compact":
            if not _text(inp.get("summary")) or not inp["summary"].strip():
                raise Refused("a blank summary")
            self.emit(out, {"e": "compact", "summary": inp["summary"]})
        elif kind == "rewind":
            index = inp.get("index")
            if not isinstance(index, int) or index < 0 or index > len(self.history):
                raise Refused(f"rewind to {index} of {len(self.history)} messages")
            if index > 0 and tool_ids(self.history[index - 1]):
                raise Refused(f"rewind to {index} leaves the calls of message {index - 1} unanswered")
            self.emit(out, {"e": "rewind", "index": index})
        elif kind == "configure":
            self.emit(out, {"e": "cfg", "system": inp["system"], "tools": inp["tools"]})
        else:
            raise Refused(f"unknown input {kind!r}")
        return out

    def on_stream(self, op, event):
        if self.phase != "gen" or op != self.op or self.attempt is None:
            return []  # stale: an attempt that failed, was cancelled or is over
        out = []
        try:
            done = self.attempt.apply(event, self.taken)
        except BadStream as err:
            return self.on_failure(str(err))
        if event.get("event") == "text_delta" and event.get("text"):
            self.emit(out, {"e": "txt", "op": op, "i": event["index"], "t": event["text"]})
        if not done:
            return out
        blocks = self.attempt.message_blocks(finished_only=True)
        if not blocks:
            return out + self.on_failure("an empty reply")
        stop, self.attempt = self.attempt.stop, None
        message = {"role": "assistant", "content": blocks}
        calls = calls_of(message)
        tools_op = self.new_op() if calls else None
        self.emit(out, {"e": "reply", "op": op, "message": message, "tools_op": tools_op})
        if calls:
            out.append({"output": "dispatch", "op": tools_op, "calls": calls})
            return out
        # This engine does not resume a truncated reply: the turn ends and says so.
        outcome = "max_tokens" if stop == "max_tokens" else "end_turn"
        self.emit(out, {"e": "end", "outcome": outcome})
        out.append({"output": "turn_ended", "outcome": {"outcome": outcome}})
        return out

    def on_failure(self, why):
        out = [{"output": "abort", "op": self.op}]
        self.attempt = None
        if self.attempts < MAX_ATTEMPTS:
            if BUG == "retry_edits_history":
                self.edit_last_user(out)
            self.emit(out, {"e": "retry", "op": self.new_op()})
            self.send(out)
            return out
        self.emit(out, {"e": "end", "outcome": "failed"})
        out.append({"output": "turn_ended", "outcome": {"outcome": "failed", "reason": why}})
        return out

    def edit_last_user(self, out):
        # Planted bug: the retry path "explains" the retry to the model by rewriting
        # the last user message, so the retried request no longer extends the first.
        index = len(self.history) - 1
        m = self.history[index]
        note = "(retrying after a provider error)"
        if isinstance(m["content"], str):
            message = {"role": "user", "content": m["content"] + "\n" + note}
        else:
            message = {"role": "user", "content": m["content"] + [{"type": "text", "text": note}]}
        self.emit(out, {"e": "edit", "index": index, "message": message})

    def on_result(self, op, outcome):
        call_id = outcome.get("tool_use_id") if isinstance(outcome, dict) else None
        if BUG == "stale_result_patches" and self.last_batch and op == self.last_batch[0]:
            return self.patch_stale(call_id, outcome)
        if self.phase != "tools" or op != self.op or call_id in self.results:
            return []  # stale or duplicate
        if call_id not in {c["id"] for c in self.calls}:
            return []  # a call this batch does not hold
        out = []
        self.emit(out, {"e": "res", "op": op, "outcome": outcome})
        if self.phase == "open":
            self.emit(out, {"e": "gen", "op": self.new_op()})
            self.send(out)
        return out

    def patch_stale(self, call_id, outcome):
        # Planted bug: a result that arrives after its batch was cancelled replaces
        # the stand-in written at the cancel, rewriting a message already sent.
        _, index = self.last_batch
        if index >= len(self.history) or not isinstance(self.history[index]["content"], list):
            return []
        content = self.history[index]["content"]
        if not any(b.get("tool_use_id") == call_id for b in content):
            return []
        patched = [result_block(call_id, outcome) if b.get("tool_use_id") == call_id else b for b in content]
        out = []
        self.emit(out, {"e": "edit", "index": index, "message": {"role": "user", "content": patched}})
        return out

    def on_cancel(self, cause):
        if self.phase == "idle":
            return []
        # A cause this engine does not know still stops the turn (a cancel may not
        # be refused); it is recorded as an unknown one.
        reason = wording = cause if cause in LIVE_CAUSES else "unknown"
        out = [{"output": "abort", "op": self.op}] if self.phase in ("gen", "tools") else []
        messages, batch = self.kept_on_cancel(wording)
        if BUG != "cancel_records_nothing":
            messages.append({"role": "user", "content": record_text(wording)})
        self.attempt = None
        self.emit(out, {"e": "stop", "messages": messages, "batch": batch})
        self.emit(out, {"e": "end", "outcome": "cancelled"})
        out.append({"output": "turn_ended", "outcome": {"outcome": "cancelled", "reason": reason}})
        return out

    def kept_on_cancel(self, cause):
        silent = BUG == "cancel_records_nothing"
        if self.phase == "gen" and self.attempt is not None:
            blocks = self.attempt.message_blocks(finished_only=False)
            if not blocks:
                return [], None
            calls = [b for b in blocks if b["type"] == "tool_use"]
            messages = [{"role": "assistant", "content": blocks}]
            if calls:
                text = "(no output)" if silent else NOT_STARTED
                messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c["id"], "content": text, "is_error": True} for c in calls]})
            return messages, None
        if self.phase == "tools":
            answers = []
            for c in self.calls:
                if c["id"] in self.results:
                    answers.append(result_block(c["id"], self.results[c["id"]]))
                elif BUG != "orphan_on_cancel":
                    text = "(no output)" if silent else cut_short_text(cause)
                    if BUG == "running_labelled_not_run":
                        # Planted bug: a call that was running when the cancel came is
                        # answered as never started, so the model may run it again.
                        text = NOT_STARTED
                    answers.append({"type": "tool_result", "tool_use_id": c["id"], "content": text, "is_error": True})
            if not answers:
                return [], None
            return [{"role": "user", "content": answers}], self.op
        return [], None


def import_history(config, messages):
    """A new session holding a conversation brought from elsewhere, if the API would
    take it; this engine refuses rather than repairs."""
    problem = history_problem(messages)
    if problem and BUG != "import_accepts_invalid":
        # (Planted bug import_accepts_invalid: the history is taken as it comes.)
        raise RestoreFailed(f"the imported history is not one the API accepts: {problem}")
    engine = Engine(config)
    outputs = []
    engine.emit(outputs, {"e": "import", "messages": messages})
    return engine, outputs


def restore(config, log):
    engine = Engine(config)
    outputs = []
    end = log.rfind(b"\n") + 1
    if end < len(log):
        outputs.append({"output": "truncate_log", "len": end})
    for number, line in enumerate(log[:end].splitlines(), start=1):
        try:
            ev = parse_json(line.decode("utf-8"))
            if not isinstance(ev, dict) or not isinstance(ev.get("e"), str):
                raise ValueError("not an event")
            engine.apply(ev)
        except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as err:
            raise RestoreFailed(f"log line {number} is not an event of this engine: {err}")
    if engine.phase != "idle":
        recover(engine, outputs)
    return engine, outputs


def recover(engine, outputs):
    """Closes the turn a crash left open, reissuing nothing."""
    messages = []
    if engine.phase == "gen":
        texts = [t for _, t in sorted(engine.drafts.items()) if t.strip()]
        if texts:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": t} for t in texts]})
    elif engine.phase == "tools":
        unknown = "(no result: the runtime stopped while this call was pending; it may have partly run)"
        messages.append({"role": "user", "content": [
            result_block(c["id"], engine.results[c["id"]]) if c["id"] in engine.results
            else {"type": "tool_result", "tool_use_id": c["id"], "content": unknown, "is_error": True}
            for c in engine.calls]})
    if not engine.final:
        messages.append({"role": "user", "content": record_text("crash")})
    engine.emit(outputs, {"e": "crash", "messages": messages}, {"e": "end", "outcome": "crashed"})
    outputs.append({"output": "turn_ended", "outcome": {"outcome": "crashed"}})


if __name__ == "__main__":
    run("event-log-python", Engine, restore, import_history=import_history)
