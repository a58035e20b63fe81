"""turnsim engine protocol v1 (docs/engine-protocol.md), engine side, stdlib only.

Guarantee: an engine written against this module answers every request with exactly
one line, in the order asked, and nothing else ever reaches stdout (the engine's own
prints go to stderr), so the harness never reads a stray line as a reply. Persist
bytes go out as base64, a request's messages go out as a count when they are the
engine's own history prefix (the same objects), and the history goes out as a delta
from what was last reported, judged by object identity, so an unchanged message is
never re-sent.

Use: call run(name, create, restore) with
  create(config)              -> engine
  restore(config, log: bytes) -> (engine, outputs); raise RestoreFailed(why) to refuse
and an engine object with
  handle(input: dict)  -> list of outputs; raise Refused(why) to refuse the input
  history              -> list of messages (wire JSON dicts), attribute or property
  pending() -> dict, idle() -> bool, state() -> str, fixed_texts() -> list of str
Outputs are dicts in the protocol's Output vocabulary, except that a persist output
carries raw bytes ({"output": "persist", "bytes": b"..."}).
"""

import base64
import json
import sys

PROTOCOL_VERSION = 1


class Refused(Exception):
    """The engine refuses an input; its state must be unchanged."""


class RestoreFailed(Exception):
    """The engine cannot restore from the log it was given."""


# Built once: json.dumps/json.loads with options build a new coder per call, and the
# adapter encodes and decodes one line per simulated event.
_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.JSONDecoder().decode


class _Served:
    def __init__(self, engine):
        self.engine = engine
        self.reported = []
        self.inputs = 0

    def _wire_output(self, out, history):
        kind = out["output"]
        if kind == "persist":
            return {"output": "persist", "bytes": base64.b64encode(out["bytes"]).decode("ascii")}
        if kind == "send":
            request = out["request"]
            messages = request["messages"]
            if isinstance(messages, list) and len(messages) <= len(history) and all(
                a is b for a, b in zip(messages, history)
            ):
                request = dict(request, messages=len(messages))
            return {"output": "send", "op": out["op"], "request": request}
        return out

    def reply(self, kind, outputs=None, full=False, **extra):
        engine = self.engine
        history = engine.history
        keep = 0
        if not full:
            limit = min(len(history), len(self.reported))
            while keep < limit and history[keep] is self.reported[keep]:
                keep += 1
        line = {"reply": kind}
        if outputs is not None:
            line["outputs"] = [self._wire_output(o, history) for o in outputs]
        line.update(extra)
        line["history"] = {"keep": keep, "append": history[keep:]}
        line["pending"] = engine.pending()
        line["idle"] = engine.idle()
        line["state"] = engine.state()
        self.reported = list(history)
        return line


def run(name, create, restore, stdin=None, stdout=None):
    """Serves one engine over stdin/stdout until stdin ends."""
    # Bytes in, decoded as UTF-8 by json whatever the locale; out, only ASCII (json
    # escapes the rest), so the locale's encoding never matters either.
    stdin = stdin or sys.stdin.buffer
    # Bytes out: each line is encoded once and leaves in one write (a text stream
    # would take two writes and a flush through its own buffer).
    out = stdout or sys.stdout.buffer
    # Anything the engine prints goes to stderr: stdout carries protocol lines only.
    sys.stdout = sys.stderr

    def send(line):
        out.write((_encode(line) + "\n").encode("ascii"))
        out.flush()

    send({"hello": "turnsim-engine", "protocol": PROTOCOL_VERSION, "engine": name})
    served = None
    for number, raw in enumerate(stdin, start=1):
        try:
            req = _decode(raw.decode("utf-8"))
            kind = req["req"]
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{name}: request line {number} is not a protocol request ({e}): {raw!r}")
        if kind in ("create", "restore"):
            # A new engine replaces the one served so far, as a new process would.
            served = None
            if kind == "create":
                served = _Served(create(req["config"]))
                send(served.reply("create", full=True, fixed_texts=served.engine.fixed_texts()))
                continue
            try:
                engine, outputs = restore(req["config"], base64.b64decode(req["log"], validate=True))
            except RestoreFailed as e:
                send({"reply": "restore", "error": str(e)})
                continue
            served = _Served(engine)
            send(served.reply("restore", outputs, full=True, fixed_texts=engine.fixed_texts()))
        elif served is None:
            raise SystemExit(f"{name}: request line {number}: {kind} before create or restore")
        elif kind == "input":
            served.inputs += 1
            if req.get("n") != served.inputs:
                raise SystemExit(f"{name}: request line {number}: input {req.get('n')} out of order")
            try:
                outputs = served.engine.handle(req["input"])
            except Refused as e:
                send(served.reply("input", refused=str(e)))
                continue
            send(served.reply("input", outputs))
        elif kind == "state":
            send(served.reply("state", full=True))
        else:
            raise SystemExit(f"{name}: request line {number}: unknown request {kind!r}")
