"""Tests of the adapter's shortcuts (turnsim_engine.py): each one must give the bytes
the plain encoding gives, and fall back to it whenever its assumption does not hold.
`python3 -m unittest` in this directory; turnsim's `cargo test` runs them too."""

import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import turnsim_engine as te  # noqa: E402


def plain(value):
    return json.dumps(value, separators=(",", ":"))


class Engine:
    """An engine whose pending operation and history the test sets by hand."""

    def __init__(self):
        self.history = []
        self.current = {"pending": "none"}

    def handle(self, input):
        return []

    def pending(self):
        return self.current

    def idle(self):
        return self.current["pending"] == "none"

    def state(self):
        return "s"

    def fixed_texts(self):
        return []


def reply_object(served, outputs=None):
    return json.loads(served.reply("input", outputs))


class Replies(unittest.TestCase):
    def test_a_pending_dict_changed_in_place_is_reported_as_it_is_now(self):
        engine = Engine()
        served = te._Served(engine, 2)
        engine.current = {"pending": "generation", "op": 1}
        for _ in range(3):  # the same object seen again: its text is reused
            self.assertEqual(reply_object(served)["pending"], {"pending": "generation", "op": 1})
        engine.current["op"] = 2
        self.assertEqual(reply_object(served)["pending"], {"pending": "generation", "op": 2})
        engine.current["calls"] = []
        engine.current["pending"] = "tools"
        self.assertEqual(reply_object(served)["pending"], {"pending": "tools", "op": 2, "calls": []})

    def test_a_reply_is_the_plain_encoding_of_its_object(self):
        engine = Engine()
        served = te._Served(engine, 2)
        first = {"role": "user", "content": "é \"q\" \n"}
        engine.history.append(first)
        engine.current = {"pending": "generation", "op": 7}
        outputs = [{"output": "persist", "bytes": b"x\n"}, {"output": "abort", "op": 3}]
        line = served.reply("input", outputs)
        self.assertEqual(
            line,
            plain({
                "reply": "input",
                "outputs": [{"output": "persist", "bytes": "eAo="}, {"output": "abort", "op": 3}],
                "history": {"keep": 0, "append": [first]},
                "pending": {"pending": "generation", "op": 7},
                "idle": False,
            }) + "\n",
        )
        # Unchanged history: keep all of it, append nothing.
        self.assertEqual(reply_object(served)["history"], {"keep": 1, "append": []})
        # The same message replaced by an equal copy is no longer kept.
        engine.history[0] = dict(first)
        self.assertEqual(reply_object(served)["history"], {"keep": 0, "append": [first]})

    def test_frozen_json_gives_the_plain_text_and_is_reused_only_for_the_same_object(self):
        te._frozen.clear()
        message = {"role": "assistant", "content": [{"type": "text", "text": "ü"}]}
        self.assertEqual(te.frozen_json(message), plain(message))
        self.assertIs(te._text_of(message), te.frozen_json(message))
        equal_copy = json.loads(plain(message))
        self.assertNotIn(id(equal_copy), te._frozen)
        self.assertEqual(te._text_of(equal_copy), plain(message))
        request = {"system": "s", 1: "int key", "tools": [message]}
        self.assertEqual(te._encode_object(request), plain(request))


class Batches(unittest.TestCase):
    def test_replies_made_before_a_bad_request_still_leave(self):
        requests = b"".join(
            line.encode() + b"\n"
            for line in (
                json.dumps({"req": "create", "config": {}}),
                json.dumps({"req": "input", "n": 1, "input": {}}),
                "not json",
            )
        )
        read, write = os.pipe()
        os.write(write, requests)
        os.close(write)
        out = io.BytesIO()
        saved = sys.stdin, sys.stdout
        try:
            sys.stdin = os.fdopen(read, "r")
            with self.assertRaises(SystemExit) as stop:
                te.run("t", lambda config: Engine(), None, stdout=out)
        finally:
            sys.stdin.close()
            sys.stdin, sys.stdout = saved
        self.assertIn("request line 3 is not a protocol request", str(stop.exception))
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual([line.get("reply", line.get("hello")) for line in lines], ["turnsim-engine", "create", "input"])


if __name__ == "__main__":
    unittest.main()
