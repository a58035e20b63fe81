#!/usr/bin/env python3
"""Example engine in Python: turnsim's reference turn engine ported, served over
engine protocol v1. Run it with turnsim's StdioFactory ("python3 example_engine.py").

Guarantee: the turn behaves as the reference engine's does. Write-ahead: every
output list puts the log records before the effects they describe. A stale or
duplicate delivery returns no outputs and changes nothing. Recovery reissues nothing,
keeps every persisted observation and is idempotent. The log is one JSON record per
line; a torn final line (no newline) is the only thing ever dropped.

TURNSIM_EXAMPLE_BUG=orphan_on_cancel plants a bug: a cancel while tools run answers
only the tools that finished, leaving the others' tool_use unanswered.
"""

import hashlib
import json
import json.scanner
import os
import sys
from operator import is_

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference_port as rp  # noqa: E402
from example_stream import Invalid, Stream  # noqa: E402
from turnsim_engine import Refused, RestoreFailed, frozen_json, run  # noqa: E402

BUG = os.environ.get("TURNSIM_EXAMPLE_BUG", "")


def by_name(tools):
    """The tools as every request lists them, as the reference does: by name, a stable
    sort (the prompt cache keys on the tools' bytes, so the order the host listed them
    in must not change them). Python compares strings by code point, which is the
    byte order of their UTF-8 the reference sorts by."""
    return sorted(tools, key=lambda t: t["name"])


_scan_record = json.scanner.make_scanner(json.JSONDecoder())


def log_record(line):
    """json.loads(line) for one log line: the C scanner alone when the line is one
    JSON value and nothing else (every line this engine writes), json.loads itself,
    with its own error, for anything else."""
    try:
        text = line.decode("utf-8")
        value, end = _scan_record(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError):
        pass
    return json.loads(line)


def persist(out, record):
    out.append({"output": "persist", "bytes": (rp.dumps(record) + "\n").encode("utf-8")})


def persist_messages(out, kind, head, messages, tail):
    """persist(out, {kind: {**head, "messages": messages, **tail}}), the same bytes,
    with each message's text from frozen_json: messages are never changed once built,
    and the adapter then reuses the text for the history delta of the same reply."""
    fields = [f'"{key}":{rp.dumps(value)}' for key, value in head.items()]
    fields.append('"messages":[' + ",".join(map(frozen_json, messages)) + "]")
    fields += [f'"{key}":{rp.dumps(value)}' for key, value in tail.items()]
    text = '{"' + kind + '":{' + ",".join(fields) + "}}\n"
    out.append({"output": "persist", "bytes": text.encode("utf-8")})


class Session:
    def __init__(self, config, history=None, next_op=1):
        self.config = dict(config)
        self.config_rev = 0
        self.history = history if history is not None else []
        self.phase = None  # None | ("generation", op) | ("tools", op, calls)
        self.next_op = next_op
        self.usage = [0, 0]
        self.truncated = 0
        self.turn_baseline = 0
        self.in_turn = False
        self.compacted = []
        self.last_receipt = None
        self.stream = None
        self.results = []
        self._digest = None
        self._tools = None
        # Tool-use ids that left the history (rewind, compaction, repair) stay taken.
        self.retired = set()
        self._pending_phase, self._pending = (), None
        self._ids_of, self._ids = [], set()

    # --- protocol surface -------------------------------------------------------

    def pending(self):
        # One object per phase, so the adapter can reuse its text while the phase
        # lasts (most replies); the phase tuple is replaced, never changed, on a move.
        phase = self.phase
        if phase is self._pending_phase:
            return self._pending
        if phase is None:
            pending = {"pending": "none"}
        elif phase[0] == "generation":
            pending = {"pending": "generation", "op": phase[1]}
        else:
            pending = {"pending": "tools", "op": phase[1], "calls": phase[2]}
        self._pending_phase, self._pending = phase, pending
        return pending

    def idle(self):
        return self.phase is None

    def fixed_texts(self):
        return [rp.TRUNCATION_RESUME_TEXT, rp.COMPACTION_NOTICE]

    def state(self):
        # Messages are never mutated, so their identities stand for the history.
        view = [
            self.phase, self.next_op, self.usage, self.truncated, self.turn_baseline,
            self.in_turn, self.compacted, self.last_receipt, self.config_rev,
            self.stream.view() if self.stream else None, self.results,
            [id(m) for m in self.history], sorted(self.retired),
        ]
        return hashlib.blake2b(rp.dumps(view).encode("utf-8"), digest_size=16).hexdigest()

    def handle(self, i):
        kind = i["input"]
        # Stream events are nine inputs in ten.
        if kind == "stream":
            return self.stream_event(i["op"], i["event"])
        if kind == "tool_result":
            return self.tool_result(i["op"], i["outcome"])
        if kind == "prompt":
            return self.prompt(i["text"], i["now"])
        if kind == "cancel":
            return self.cancel(i["cause"])
        if kind == "compact":
            return self.compact(i["summary"])
        if kind == "rewind":
            return self.rewind(i["index"])
        if kind == "configure":
            return self.configure(i["system"], i["tools"], i.get("thinking"))
        raise Refused(f"unknown input {kind!r}")

    # --- the state machine ------------------------------------------------------

    def require_idle(self):
        if self.phase is not None:
            raise Refused(f"busy: op#{self.phase[1]} is outstanding; this input is accepted only between turns")

    def fresh_op(self):
        op = self.next_op
        self.next_op += 1
        return op

    def generate(self):
        op = self.fresh_op()
        self.phase = ("generation", op)
        return [("generate", op)]

    def finish(self, reason):
        self.phase = None
        return [("finished", reason)]

    def check_response(self, message, stop_reason):
        if len(message["content"]) == 0:
            raise Invalid("the generated message has empty content")
        for j, b in enumerate(message["content"]):
            if b.get("type") == "tool_result":
                raise Invalid(f"block {j} of the generated message is a tool_result")
        calls = rp.tool_calls(message)
        if stop_reason == "tool_use" and not calls:
            raise Invalid("stop reason tool_use with no tool calls")
        held = self.history_tool_ids()
        seen = set()
        for c in calls:
            if c["id"] in held or c["id"] in seen:
                raise Invalid(f"tool_use id {c['id']} is not unique")
            seen.add(c["id"])
        return calls

    def history_tool_ids(self):
        """The tool_use ids the history holds. Kept from one call to the next while
        the history holds the same messages (messages are never changed once built),
        extended when it only grew: a response is checked against the whole history,
        and rescanning it for every response and tool block was a tenth of the
        process's time."""
        history, seen = self.history, self._ids_of
        n = len(seen)
        if len(history) == n and all(map(is_, history, seen)):
            return self._ids
        if len(history) > n and all(map(is_, history, seen)):
            ids = self._ids
            ids.update(rp.tool_use_ids(history[n:]))
        else:
            ids = self._ids = set(rp.tool_use_ids(history))
        self._ids_of = list(history)
        return ids

    def generated(self, message, stop_reason, usage):
        calls = self.check_response(message, stop_reason)
        self.usage = [self.usage[0] + usage["input_tokens"], self.usage[1] + usage["output_tokens"]]
        self.history.append(message)
        if calls:
            self.truncated = 0
            op = self.fresh_op()
            self.phase = ("tools", op, calls)
            return [("tools", op, calls)]
        if stop_reason == "max_tokens":
            if self.truncated < self.config["max_truncated_resumes"]:
                self.truncated += 1
                self.history.append(rp.user_text(rp.TRUNCATION_RESUME_TEXT))
                return self.generate()
            return self.finish({"outcome": "max_tokens"})
        self.truncated = 0
        return self.finish({"outcome": "end_turn"})

    # --- inputs -----------------------------------------------------------------

    def prompt(self, text, now):
        self.require_idle()
        if text == "":
            raise Refused("empty input: the prompt is empty")
        hidden = [d for d in rp.hidden_directives(self.compacted, self.history) if d != text]
        block = rp.turn_context_block(now, self.config["stance"], hidden)
        before = len(self.history)
        self.history.append({"role": "user", "content": [rp.text_block(block), rp.text_block(text)]})
        self.usage = [0, 0]
        self.truncated = 0
        effects = self.generate()
        self.turn_baseline = before
        self.in_turn = True
        out = []
        self.commit(before, effects, out, turn_start=True)
        return out

    def commit(self, before, effects, out, turn_start=False):
        """Persists what a transition appended with the intent it left, then carries
        out its effects."""
        appended = self.history[before:]
        finishing = any(e[0] == "finished" for e in effects)
        if turn_start:
            persist_messages(out, "turn_start", {"baseline": before}, appended, {"pending": self.pending()})
        elif appended or not finishing:
            persist_messages(out, "append", {}, appended, {"pending": self.pending()})
        for e in effects:
            if e[0] == "generate":
                self.send(e[1], out)
            elif e[0] == "tools":
                self.results = []
                out.append({"output": "dispatch", "op": e[1], "calls": e[2]})
            else:
                self.stream = None
                self.results = []
                self.finish_turn(e[1], out)

    def sorted_tools(self):
        """The tools by name, one list per configuration: it goes out in every
        request, and frozen_json spares the adapter encoding it again each time."""
        if self._tools is None:
            self._tools = by_name(self.config["tools"])
        frozen_json(self._tools)
        return self._tools

    def prefix_digest(self):
        if self._digest is None:
            prefix = rp.dumps({"system": self.config["system"], "tools": self.sorted_tools()})
            self._digest = hashlib.sha256(prefix.encode("utf-8")).hexdigest()
        return self._digest

    def send(self, op, out):
        request = {
            "system": self.config["system"],
            "tools": self.sorted_tools(),
        }
        # The session's thinking setting, a fixed field, so before the messages; absent
        # when off (protocol §7: a request without it is judged as thinking off).
        if self.config.get("thinking") is not None:
            request["thinking"] = self.config["thinking"]
        request["messages"] = list(self.history)
        request["cache"] = {
            "session_key": self.config["session_key"],
            "breakpoints": rp.cache_breakpoints(self.turn_baseline, len(self.history)),
        }
        digest = self.prefix_digest()
        persist(out, {"receipt": {"op": op, "digest": digest}})
        if self.last_receipt is not None and self.last_receipt[1] != digest:
            activity = {"kind": "prefix-changed", "data": {"current": digest, "previous": self.last_receipt[1]}}
            persist(out, {"activity": {"activity": activity}})
            out.append({"output": "activity", "activity": activity})
        self.last_receipt = [op, digest]
        self.stream = Stream(op)
        out.append({"output": "send", "op": op, "request": request})

    def finish_turn(self, outcome, out):
        if outcome["outcome"] == "failed":
            repaired = list(self.history)
            rp.repair_after_failure(repaired, self.turn_baseline)
            n = len(repaired)
            if n < len(self.history) and rp.validate(self.history[:n]) is None:
                self.retired.update(rp.tool_use_ids(self.history[n:]))
                del self.history[n:]
                persist(out, {"rewind": {"len": n}})
        self.in_turn = False
        persist(out, {"turn_end": {"outcome": outcome}})
        out.append({"output": "turn_ended", "outcome": outcome})

    def fail_generation(self, op, why, out):
        if self.phase == ("generation", op):
            self.phase = None
            out.append({"output": "abort", "op": op})
            self.stream = None
            self.finish_turn({"outcome": "failed", "reason": why}, out)

    def stream_event(self, op, event):
        out = []
        stream = self.stream
        if stream is None or stream.op != op:
            return out  # stale: an operation that is over
        kind = event["event"]
        if kind == "error":
            self.fail_generation(op, f"provider error {event['kind']}: {event['message']}", out)
            return out
        if kind == "block_start" and event["block"].get("type") == "tool_use":
            event = self.with_unique_id(event, stream)
        elif kind == "message_start" and not stream.started:
            persist(out, {"draft": {"op": op, "base_len": len(self.history)}})
        try:
            text = stream.apply(event)
            finished = stream.finish() if kind == "message_stop" else None
        except Invalid as e:
            out.clear()
            self.fail_generation(op, f"stream protocol: {e}", out)
            return out
        if text is not None:
            persist(out, {"draft_text": {"op": op, "text": text}})
        elif finished is not None:
            before = len(self.history)
            try:
                effects = self.generated(*finished)
            except Invalid as e:
                self.fail_generation(op, f"invalid response: {e}", out)
                return out
            self.stream = None
            self.commit(before, effects, out)
        return out

    def taken(self, tool_use_id, stream):
        return (
            tool_use_id in self.retired
            or any(b["kind"].get("type") == "tool_use" and b["kind"]["id"] == tool_use_id for b in stream.blocks)
            or tool_use_id in self.history_tool_ids()
        )

    def with_unique_id(self, event, stream):
        """The block_start event with the id the session keeps: the provider's own when
        it is free, else the first free `{id}-{k}`, k = 2, 3, ... (docs/spec.md §7)."""
        provider_id = event["block"]["id"]
        if not self.taken(provider_id, stream):
            return event
        k = 2
        while self.taken(f"{provider_id}-{k}", stream):
            k += 1
        return dict(event, block=dict(event["block"], id=f"{provider_id}-{k}"))

    def tool_result(self, op, outcome):
        out = []
        if self.phase is None or self.phase[0] != "tools" or self.phase[1] != op:
            return out
        calls = self.phase[2]
        tid = outcome["tool_use_id"]
        if not any(c["id"] == tid for c in calls) or any(r["tool_use_id"] == tid for r in self.results):
            return out  # unknown or a duplicate: nothing changes
        persist(out, {"tool_result": {"op": op, "outcome": outcome}})
        self.results.append(outcome)
        if len(self.results) < len(calls):
            return out
        by_id = {r["tool_use_id"]: r for r in self.results}
        blocks = [rp.result_block(c["id"], by_id[c["id"]]["content"], by_id[c["id"]]["is_error"]) for c in calls]
        before = len(self.history)
        self.history.append(rp.user_blocks(blocks))
        self.results = []
        self.commit(before, self.generate(), out)
        return out

    def cancel(self, cause):
        out = []
        if self.phase is None:
            return out
        before = len(self.history)
        reason = cause
        phrase = rp.PHRASES[cause]
        op = self.phase[1]
        out.append({"output": "abort", "op": op})
        if self.phase[0] == "generation":
            blocks = self.stream.kept_blocks(True) if self.stream and self.stream.op == op else []
            if blocks:
                partial = rp.assistant_blocks(blocks)
                try:
                    self.check_response(partial, "end_turn")
                except Invalid:
                    # A reused tool id the provider would refuse: keep the rest.
                    blocks = [b for b in blocks if b["type"] != "tool_use"]
                    partial = rp.assistant_blocks(blocks) if blocks else None
                if partial is not None:
                    calls = rp.tool_calls(partial)
                    self.history.append(partial)
                    if calls:
                        self.history.append(rp.user_blocks([rp.result_block(c["id"], phrase, True) for c in calls]))
        else:
            calls = self.phase[2]
            finished = {r["tool_use_id"]: r for r in self.results}
            self.results = []
            blocks, unfinished = [], []
            for c in calls:
                r = finished.get(c["id"])
                if r is not None:
                    blocks.append(rp.result_block(c["id"], r["content"], r["is_error"]))
                else:
                    unfinished.append(c["name"])
                    if BUG != "orphan_on_cancel":
                        blocks.append(rp.result_block(c["id"], phrase, True))
            if blocks:
                self.history.append(rp.user_blocks(blocks))
            if unfinished:
                self.history.append(rp.user_text(rp.note_text(phrase, unfinished)))
        rp.append_marker(self.history, reason)
        self.commit(before, self.finish({"outcome": "cancelled", "reason": reason}), out)
        return out

    def compact(self, summary):
        self.require_idle()
        if summary.strip(rp.WHITE_SPACE) == "":
            raise Refused("empty input: the compaction summary is empty")
        compacted = list(self.compacted)
        for m in self.history:
            words = rp.directive_words(m)
            if words is not None and words not in compacted:
                compacted.append(words)
        messages = [rp.user_text(rp.COMPACTION_NOTICE), rp.assistant_blocks([rp.text_block(summary)])]
        self.retired.update(rp.tool_use_ids(self.history))
        self.history = messages
        self.compacted = compacted
        self.turn_baseline = len(messages)
        out = []
        persist(out, {"reset": {"messages": messages, "compacted": compacted}})
        return out

    def rewind(self, index):
        self.require_idle()
        if index > len(self.history):
            raise Refused(f"cannot rewind to message {index}: the history has {len(self.history)} messages")
        err = rp.validate(self.history[:index])
        if err:
            raise Refused(f"invalid history: {err}")
        self.retired.update(rp.tool_use_ids(self.history[index:]))
        del self.history[index:]
        self.turn_baseline = min(self.turn_baseline, index)
        out = []
        persist(out, {"rewind": {"len": index}})
        return out

    def configure(self, system, tools, thinking=None):
        # Idle only: a thinking switch never lands inside a tool loop (protocol §4).
        self.require_idle()
        out = []
        record = {"system": system, "tools": tools}
        if thinking is not None:
            record["thinking"] = thinking
        persist(out, {"configure": record})
        self.config["system"] = system
        self.config["tools"] = tools
        if thinking is not None:
            self.config["thinking"] = switched(thinking)
        self.config_rev += 1
        self._digest = None
        self._tools = None
        return out


def switched(thinking):
    """The session's setting after a host's thinking switch: off is no setting."""
    return thinking if thinking.get("type") == "enabled" else None


def create(config):
    return Session(config)


def restore(config, log):
    """Rebuilds a session from its log after a crash."""
    config = dict(config)
    end = log.rfind(b"\n") + 1
    out = []
    if end < len(log):
        out.append({"output": "truncate_log", "len": end})
    history, pending, draft, results = [], {"pending": "none"}, None, []
    last_op, last_receipt, baseline, in_turn, compacted = 0, None, 0, False, []
    retired = set()
    offset = 0
    for i, line in enumerate(log[:end].split(b"\n")[:-1]):
        try:
            record = log_record(line)
            (kind, r), = record.items()
        except (ValueError, AttributeError, TypeError) as e:
            raise RestoreFailed(f"log corrupt at record {i} (byte {offset}): {e}")
        offset += len(line) + 1
        if kind == "configure":
            config["system"], config["tools"] = r["system"], r["tools"]
            if r.get("thinking") is not None:
                config["thinking"] = switched(r["thinking"])
        elif kind in ("turn_start", "append"):
            if kind == "turn_start":
                if r["baseline"] != len(history):
                    raise RestoreFailed(f"log record {i}: turn baseline {r['baseline']} is not the {len(history)} messages replayed before it")
                baseline, in_turn = r["baseline"], True
            history.extend(r["messages"])
            op = r["pending"].get("op")
            if op is not None:
                last_op = max(last_op, op)
            if kind == "turn_start" or op != pending.get("op"):
                results = []
            pending = r["pending"]
        elif kind == "draft":
            last_op = max(last_op, r["op"])
            draft = [r["op"], r["base_len"], ""]
        elif kind == "draft_text":
            if draft is not None and draft[0] == r["op"]:
                draft[2] += r["text"]
        elif kind == "tool_result":
            if pending.get("op") == r["op"]:
                results.append(r["outcome"])
        elif kind == "receipt":
            last_op = max(last_op, r["op"])
            last_receipt = [r["op"], r["digest"]]
        elif kind == "reset":
            retired.update(rp.tool_use_ids(history))
            history, compacted, baseline = list(r["messages"]), list(r["compacted"]), len(r["messages"])
        elif kind == "rewind":
            if r["len"] > len(history):
                raise RestoreFailed(f"log record {i}: rewind to {r['len']} beyond the {len(history)} messages replayed")
            retired.update(rp.tool_use_ids(history[r["len"]:]))
            del history[r["len"]:]
            baseline = min(baseline, r["len"])
        elif kind == "turn_end":
            in_turn, pending, draft, results = False, {"pending": "none"}, None, []
    before = len(history)
    if draft is not None and pending["pending"] == "generation" and pending["op"] == draft[0]:
        rp.recover_crashed_turn(history, draft[1], draft[2])
    err = rp.recover_checkpoint(history, pending, results)
    if err:
        raise RestoreFailed(err)
    s = Session(config, history, last_op + 1)
    s.turn_baseline, s.in_turn, s.compacted, s.last_receipt = baseline, in_turn, compacted, last_receipt
    s.retired = retired
    if s.in_turn:
        appended = history[before:]
        if appended:
            persist(out, {"append": {"messages": appended, "pending": {"pending": "none"}}})
        s.finish_turn({"outcome": "crashed"}, out)
    return s, out


if __name__ == "__main__":
    run("python-example" + (f"+{BUG}" if BUG else ""), create, restore, protocol=2)
