"""turnsim engine protocol v1 and v2 (docs/engine-protocol.md), engine side, stdlib only.

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

run(..., import_history=f) offers the optional `import` request (docs/engine-protocol.md
§17): f(config, messages) -> (engine, outputs), raising RestoreFailed(why) to refuse a
history (history_problem() below says what the API would reject). Without it the hello
offers nothing more, and the harness never sends `import`.

run(..., protocol=2) speaks protocol 2 when the harness does too (it says the newest
version it speaks in TURNSIM_PROTOCOL): state() is then called only when the harness
asks for the digest (a `digest` request), not after every input. Nothing else about
the engine changes; an engine whose state() is cheap gains little from it.
"""

import base64
import binascii
import json
import json.scanner
import os
import sys
from operator import is_

PROTOCOL_VERSION = 1
NEWEST_PROTOCOL = 2


class Refused(Exception):
    """The engine refuses an input; its state must be unchanged."""


class RestoreFailed(Exception):
    """The engine cannot restore from the log it was given."""


def compact_encoder():
    """A function that encodes a dict or list as compact JSON, the same bytes as
    json.dumps(value, separators=(",", ":")). Built once: json.dumps with options
    builds a new encoder per call, and JSONEncoder.encode builds a C encoder and a
    dict for its cycle check per call, which cost more than the encoding itself at
    one line per simulated event. Messages are trees, so no cycle check is needed."""
    enc = json.JSONEncoder(separators=(",", ":"), check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return enc.encode
    c_encode = make(None, enc.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(c_encode(value, 0))


_encode = compact_encoder()
# The decoder's C scanner called directly: JSONDecoder.raw_decode is a Python frame
# around it, and each request line pays for it.
_scan = json.scanner.make_scanner(json.JSONDecoder())


def _decode(text):
    """json.loads for one request line (an object, then only the newline)."""
    try:
        value, end = _scan(text, 0)
    except StopIteration as e:
        raise json.JSONDecodeError("Expecting value", text, e.value) from None
    if end != len(text) and text[end:].strip():
        raise ValueError(f"extra data after the JSON value at column {end + 1}")
    return value


# Texts of values the engine promised never to change (frozen_json), by identity.
# Each entry holds its value, so no id is reused while the entry lives; the table is
# emptied for every new engine and whenever it grows past _FROZEN_MAX entries.
_frozen = {}
_FROZEN_MAX = 4096


def frozen_json(value):
    """The compact JSON text of `value` (what _encode gives), for a value the caller
    promises never to change again: a message once built, a tool list kept for the
    session. The text is remembered by the value's identity, and the adapter reuses it
    when the very same object goes out again: in a history delta, or as a field of a
    `send` request. An engine that writes its messages into its own log calls this
    there, so each message is encoded once instead of once for the log and once for
    the delta. Values never passed here are encoded afresh every time, as before."""
    entry = _frozen.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1]
    text = _encode(value)
    if len(_frozen) >= _FROZEN_MAX:
        _frozen.clear()
    _frozen[id(value)] = (value, text)
    return text


def _text_of(value):
    """_encode(value), from frozen_json's table when the value is there."""
    entry = _frozen.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1]
    return _encode(value)


def _encode_object(obj):
    """_encode of a dict, each value through _text_of: the same bytes. A dict with a
    key that is not a string (which the encoder would convert) goes whole to _encode."""
    if type(obj) is not dict:
        return _encode(obj)
    try:
        return "{" + ",".join([_key(k) + ":" + _text_of(v) for k, v in obj.items()]) + "}"
    except _NotStr:
        return _encode(obj)


class _NotStr(Exception):
    pass


def _key(k):
    if type(k) is not str:
        raise _NotStr
    return _quote(k)


_quote = getattr(json.encoder, "c_encode_basestring_ascii", None) or json.encoder.py_encode_basestring_ascii


def _b64(data):
    """base64.b64encode(data).decode("ascii") without its Python wrapper."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")


_NONE = object()


class _Served:
    def __init__(self, engine, version):
        self.engine = engine
        # The history as last reported: a copy of the list (the messages themselves,
        # so none can be freed and its identity reused meanwhile).
        self.reported = []
        self.inputs = 0
        # v1 reports the digest in every reply; v2 only in `state` and `digest` replies.
        self.every_state = version < 2
        # The pending operation last reported: the object pending() returned, a deep
        # copy of it (its own encoding read back) and its text. The text is reused only
        # while pending() returns that same object *and* it still equals the copy, so an
        # engine that builds a fresh dict each time, or changes one in place, has it
        # encoded afresh, as before.
        self.pending_obj = _NONE
        self.pending_copy = None
        self.pending_text = None

    def _wire_output(self, out, history):
        """One output, encoded as _encode would encode its wire form."""
        kind = out["output"]
        if kind == "persist":
            # base64 needs no JSON escaping, so the text goes in as it is.
            return '{"output":"persist","bytes":"' + _b64(out["bytes"]) + '"}'
        if kind == "send":
            request = out["request"]
            messages = request["messages"]
            # The same objects as the history's first messages: sent as a count.
            if type(messages) is list and len(messages) <= len(history) and all(map(is_, messages, history)):
                request = dict(request, messages=len(messages))
            return '{"output":"send","op":' + _encode(out["op"]) + ',"request":' + _encode_object(request) + "}"
        return _encode(out)

    def reply(self, kind, outputs=None, full=False, extra=None):
        """The reply line, newline included: the same text as _encode of the object
        {"reply", "outputs", *extra, "history", "pending", "idle", "state"}, but joined
        from pieces. Most of a reply is fixed text, and the C encoder costs about a
        microsecond per small object (it lists each dict's items), which at one reply
        per simulated event was the largest single cost of the engine process."""
        engine = self.engine
        history = engine.history
        before = self.reported
        n = len(before)
        # Most replies leave the history as it was: one C-level pass of identity tests,
        # and the delta's text is fixed.
        if not full and len(history) == n and all(map(is_, history, before)):
            delta = _UNCHANGED[n] if n < _KNOWN else ',"history":{"keep":' + str(n) + ',"append":[]},"pending":'
        else:
            keep = 0
            if not full:
                limit = min(len(history), n)
                while keep < limit and history[keep] is before[keep]:
                    keep += 1
            appended = ",".join([_text_of(m) for m in history[keep:]])
            delta = ',"history":{"keep":' + str(keep) + ',"append":[' + appended + ']},"pending":'
            # Copied only when it changed.
            self.reported = list(history)
        if outputs:
            wire = self._wire_output
            outs = ',"outputs":[' + ",".join([wire(o, history) for o in outputs]) + "]"
        else:
            outs = "" if outputs is None else ',"outputs":[]'
        if extra:
            outs += "".join([",%s:%s" % (_encode(key), _encode(value)) for key, value in extra.items()])
        # The pending operation's text, reused while pending() returns the same object
        # and that object still equals a copy of what was encoded.
        pending = engine.pending()
        if pending is self.pending_obj:
            copy = self.pending_copy
            if copy is not None and pending == copy:
                ptext = self.pending_text
            else:
                ptext = self.pending_text = _encode(pending)
                # The same object a second time: worth a copy to check the next ones
                # against (an engine that builds a fresh dict each time never pays it).
                self.pending_copy = _decode(ptext)
        else:
            ptext = self.pending_text = _encode(pending)
            self.pending_obj = pending
            self.pending_copy = None
        idle = engine.idle()
        if self.every_state or kind == "state":
            tail = ',"idle":' + _encode(idle) + ',"state":' + _encode(engine.state()) + "}\n"
        else:
            tail = _IDLE_TAIL.get(idle) if type(idle) is bool else None
            if tail is None:
                tail = ',"idle":' + _encode(idle) + "}\n"
        return "".join((_REPLY_HEAD.get(kind) or '{"reply":' + _encode(kind), outs, delta, ptext, tail))


_REPLY_HEAD = {k: '{"reply":"' + k + '"' for k in ("input", "create", "restore", "import", "state")}
# The fixed text of an unchanged history of n messages, for the usual lengths.
_KNOWN = 256
_UNCHANGED = [',"history":{"keep":' + str(n) + ',"append":[]},"pending":' for n in range(_KNOWN)]
_IDLE_TAIL = {True: ',"idle":true}\n', False: ',"idle":false}\n'}


def history_problem(messages):
    """Why the Messages API would reject this history, or None. Each assistant
    message has content; every tool_use id is unique; the message after an assistant
    message with tool calls is a user message that answers each of them with a
    tool_result before anything else; every tool_result answers a call of the message
    just before it; a tool_use sits only in an assistant message."""
    seen = set()
    asked = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"message {i} is not a user or assistant message"
        content = m.get("content")
        if not isinstance(content, (str, list)):
            return f"message {i} has content that is neither a string nor a list of blocks"
        blocks = content if isinstance(content, list) else []
        if any(not isinstance(b, dict) for b in blocks):
            return f"message {i} has a block that is not an object"
        if m["role"] == "assistant":
            if asked:
                return f"the tool_use {asked[0]} of message {i - 1} is not answered"
            if content == [] or content == "":
                return f"the assistant message {i} has no content"
            asked = []
            for b in blocks:
                if b.get("type") == "tool_use":
                    if b.get("id") in seen:
                        return f"the tool_use id {b.get('id')!r} of message {i} is used twice"
                    seen.add(b.get("id"))
                    asked.append(b.get("id"))
            continue
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if any(b.get("type") == "tool_use" for b in blocks):
            return f"the user message {i} holds a tool_use"
        for r in results:
            if r not in asked:
                return f"the tool_result for {r!r} in message {i} answers no call of the message before it"
        missing = [a for a in asked if a not in results]
        if missing:
            return f"the tool_use {missing[0]} of message {i - 1} is not answered"
        if results and any(b.get("type") != "tool_result" for b in blocks[: len(results)]):
            return f"the tool_result blocks of message {i} do not come first"
        asked = []
    if asked:
        return f"the tool_use {asked[0]} of the last message is not answered"
    return None


def _harness_protocol():
    """The newest version the harness speaks; a harness that does not say speaks 1."""
    try:
        return max(1, int(os.environ.get("TURNSIM_PROTOCOL", "1")))
    except ValueError:
        return 1


def _batches(stdin):
    """The request lines, a batch at a time: every complete line that has arrived
    (a twin's inputs come several at once in version 2), then the next batch. The
    caller writes the batch's replies in one write before it asks for more, since
    asking may wait (§16 allows it; "flush before you wait" is the rule). A final
    line without its newline is a line too."""
    fd = None
    if stdin is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            stdin = sys.stdin.buffer
    if fd is None:
        # A stream given by the caller (tests): line by line.
        for raw in stdin:
            yield (raw,)
        return
    read = os.read
    rest = b""
    while True:
        chunk = read(fd, 1 << 16)
        if not chunk:
            break
        if rest:
            chunk = rest + chunk
        lines = chunk.split(b"\n")
        rest = lines.pop()
        if lines:
            yield lines
    if rest:
        yield (rest,)


def run(name, create, restore, stdin=None, stdout=None, protocol=PROTOCOL_VERSION, import_history=None):
    """Serves one engine over stdin/stdout until stdin ends, in the newest protocol
    version both `protocol` (the newest this engine opts into) and the harness speak."""
    version = min(protocol, NEWEST_PROTOCOL, _harness_protocol())
    # Bytes out, only ASCII (json escapes the rest), so the locale's encoding never
    # matters; bytes in, decoded as UTF-8 whatever the locale.
    out = stdout or sys.stdout.buffer
    # The process's own stdout is written with os.write straight to its descriptor:
    # the buffered stream's write and flush are two calls and a copy per batch for
    # the same single system call.
    fd = None
    if stdout is None:
        out.flush()
        fd = out.fileno()
    # Anything the engine prints goes to stderr: stdout carries protocol lines only.
    sys.stdout = sys.stderr

    def write(text):
        data = text.encode("ascii")
        if fd is None:
            out.write(data)
            out.flush()
            return
        # A pipe write may be cut short (a signal arriving mid-write);
        # the rest follows until the whole batch is out.
        done = os.write(fd, data)
        while done < len(data):
            done += os.write(fd, memoryview(data)[done:])

    def line(value):
        return _encode(value) + "\n"

    hello = {"hello": "turnsim-engine", "protocol": version, "engine": name}
    if import_history is not None:
        hello["accepts"] = ["import"]
    write(line(hello))
    served = None
    number = 0
    for batch in _batches(stdin):
        replies = []
        send = replies.append
        # The replies already made leave even when a request stops the engine, so the
        # harness reads them before it finds the process gone.
        try:
            for raw in batch:
                number += 1
                try:
                    req = _decode(raw.decode("utf-8"))
                    kind = req["req"]
                except (ValueError, KeyError, TypeError) as e:
                    raise SystemExit(f"{name}: request line {number} is not a protocol request ({e}): {raw!r}")
                if kind == "input" and served is not None:
                    # The hot path first: one input of the engine being served.
                    served.inputs += 1
                    if req.get("n") != served.inputs:
                        raise SystemExit(f"{name}: request line {number}: input {req.get('n')} out of order")
                    try:
                        outputs = served.engine.handle(req["input"])
                    except Refused as e:
                        send(served.reply("input", extra={"refused": str(e)}))
                        continue
                    send(served.reply("input", outputs))
                elif kind == "import" and import_history is not None:
                    served = None
                    _frozen.clear()
                    try:
                        engine, outputs = import_history(req["config"], req["history"])
                    except RestoreFailed as e:
                        send(line({"reply": "import", "error": str(e)}))
                        continue
                    served = _Served(engine, version)
                    send(served.reply("import", outputs, full=True, extra={"fixed_texts": engine.fixed_texts()}))
                elif kind in ("create", "restore"):
                    # A new engine replaces the one served so far, as a new process would.
                    served = None
                    _frozen.clear()
                    if kind == "create":
                        served = _Served(create(req["config"]), version)
                        send(served.reply("create", full=True, extra={"fixed_texts": served.engine.fixed_texts()}))
                        continue
                    try:
                        engine, outputs = restore(req["config"], base64.b64decode(req["log"], validate=True))
                    except RestoreFailed as e:
                        send(line({"reply": "restore", "error": str(e)}))
                        continue
                    served = _Served(engine, version)
                    send(served.reply("restore", outputs, full=True, extra={"fixed_texts": engine.fixed_texts()}))
                elif served is None:
                    raise SystemExit(f"{name}: request line {number}: {kind} before create or restore")
                elif kind == "state":
                    send(served.reply("state", full=True))
                elif kind == "digest" and version >= 2:
                    send(line({"reply": "digest", "state": served.engine.state()}))
                else:
                    raise SystemExit(f"{name}: request line {number}: unknown request {kind!r}")
        finally:
            if replies:
                write("".join(replies))
