"""Tests of the Python adapter and example engine: `python3 -m unittest` in this
directory (turnsim's `cargo test` runs them too, in sim/tests/stdio_python.rs)."""

import base64
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import example_engine as ee  # noqa: E402
import reference_port as rp  # noqa: E402
from turnsim_engine import Refused, RestoreFailed, history_problem  # noqa: E402

CONFIG = {
    "system": "s",
    "tools": [{"name": "read_file", "description": "", "input_schema": {}}],
    "session_key": "k",
    "stance": "st",
    "max_truncated_resumes": 3,
}


def log_of(outputs):
    return b"".join(o["bytes"] for o in outputs if o["output"] == "persist")


def stream(op, *events):
    return [{"input": "stream", "op": op, "event": e} for e in events]


def tool_call_reply(op, call_id):
    return stream(
        op,
        {"event": "message_start"},
        {"event": "block_start", "index": 0, "block": {"type": "tool_use", "id": call_id, "name": "read_file"}},
        {"event": "input_json_delta", "index": 0, "partial_json": '{"path":"a"}'},
        {"event": "block_stop", "index": 0},
        {"event": "message_delta", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}},
        {"event": "message_stop"},
    )


def feed(session, inputs):
    out = []
    for i in inputs:
        out.extend(session.handle(i))
    return out


class Texts(unittest.TestCase):
    def test_the_note_names_one_tool_or_several_in_the_reference_wording(self):
        self.assertEqual(
            rp.note_text("Canceled by user", ["read_file"]),
            "[Canceled by user while the tool call `read_file` was running. "
            "It may have already started and partially applied its effects.]",
        )
        self.assertEqual(
            rp.note_text("Canceled", ["a", "bad name"]),
            "[Canceled while the tool calls `a`, (an unrecognised tool) were running. "
            "They may have already started and partially applied their effects.]",
        )

    def test_an_unanswered_tool_call_is_an_invalid_history(self):
        history = [
            rp.user_text("hi"),
            rp.assistant_blocks([{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]),
        ]
        self.assertEqual(rp.validate(history), "message 1: history ends with unanswered tool calls t1")
        self.assertIsNone(rp.validate(history, allow_pending=True))


class Engine(unittest.TestCase):
    def test_history_problem_names_what_the_api_would_reject_in_an_import(self):
        call = lambda i: {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "ls", "input": {}}]}
        answer = lambda i: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}]}
        prompt = {"role": "user", "content": "hi"}
        self.assertIsNone(history_problem([prompt, call("a"), answer("a")]))
        self.assertEqual(history_problem([prompt, call("a")]), "the tool_use a of the last message is not answered")
        self.assertEqual(history_problem([prompt, call("a"), prompt]), "the tool_use a of message 1 is not answered")
        self.assertEqual(
            history_problem([prompt, {"role": "assistant", "content": "x"}, answer("b")]),
            "the tool_result for 'b' in message 2 answers no call of the message before it",
        )
        self.assertEqual(
            history_problem([prompt, call("a"), answer("a"), call("a"), answer("a")]),
            "the tool_use id 'a' of message 3 is used twice",
        )
        self.assertEqual(
            history_problem([prompt, {"role": "assistant", "content": []}, prompt]),
            "the assistant message 1 has no content",
        )

    def test_a_prompt_persists_the_turn_before_sending_it(self):
        s = ee.create(CONFIG)
        out = s.handle({"input": "prompt", "text": "hi", "now": "t0"})
        self.assertEqual([o["output"] for o in out], ["persist", "persist", "send"])
        self.assertEqual(out[2]["request"]["cache"]["breakpoints"], [{"after_message": None}, {"after_message": 0}])
        self.assertEqual(s.pending(), {"pending": "generation", "op": 1})

    def test_thinking_on_in_the_config_is_sent_before_the_messages_and_absent_when_off(self):
        thinking = {"type": "enabled", "budget_tokens": 2048}
        s = ee.create(dict(CONFIG, thinking=thinking))
        request = s.handle({"input": "prompt", "text": "hi", "now": "t0"})[2]["request"]
        self.assertEqual(list(request), ["system", "tools", "thinking", "messages", "cache"])
        self.assertEqual(request["thinking"], thinking)
        off = ee.create(CONFIG).handle({"input": "prompt", "text": "hi", "now": "t0"})[2]["request"]
        self.assertEqual(list(off), ["system", "tools", "messages", "cache"])

    def test_a_thinking_switch_applies_from_the_next_turn_and_a_restore_replays_it(self):
        thinking = {"type": "enabled", "budget_tokens": 2048}
        s = ee.create(dict(CONFIG, thinking=thinking))
        out = feed(s, [{"input": "prompt", "text": "hi", "now": "t0"}] + tool_call_reply(1, "t1"))
        switch = {"input": "configure", "system": "s", "tools": CONFIG["tools"], "thinking": {"type": "disabled"}}
        before = s.state()
        with self.assertRaises(Refused):  # inside the tool loop: never applied there
            s.handle(switch)
        self.assertEqual(s.state(), before)
        out += s.handle({"input": "tool_result", "op": 2, "outcome": {"tool_use_id": "t1", "content": "x", "is_error": False}})
        self.assertEqual(out[-1]["request"]["thinking"], thinking)
        out += feed(s, stream(3, {"event": "message_start"}, {"event": "message_delta", "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}, {"event": "message_stop"}))
        out += s.handle(switch)
        out += s.handle({"input": "prompt", "text": "again", "now": "t1"})
        self.assertNotIn("thinking", out[-1]["request"])
        restored, _ = ee.restore(dict(CONFIG, thinking=thinking), log_of(out))
        later = restored.handle({"input": "prompt", "text": "more", "now": "t2"})
        self.assertNotIn("thinking", [o for o in later if o["output"] == "send"][0]["request"])

    def test_a_prompt_while_busy_is_refused_and_changes_nothing(self):
        s = ee.create(CONFIG)
        s.handle({"input": "prompt", "text": "hi", "now": "t0"})
        before = s.state()
        with self.assertRaises(Refused):
            s.handle({"input": "prompt", "text": "again", "now": "t1"})
        self.assertEqual(s.state(), before)

    def test_a_cancel_while_tools_run_answers_every_call_then_notes_then_marks(self):
        s = ee.create(CONFIG)
        feed(s, [{"input": "prompt", "text": "hi", "now": "t0"}] + tool_call_reply(1, "t1"))
        self.assertEqual(s.pending()["pending"], "tools")
        s.handle({"input": "cancel", "cause": "user"})
        tail = s.history[-3:]
        self.assertEqual(tail[0]["content"][0]["content"], "Canceled by user")
        self.assertTrue(tail[1]["content"].startswith("[Canceled by user while the tool call `read_file`"))
        self.assertEqual(tail[2], rp.user_text("[Request interrupted by user]"))
        self.assertIsNone(rp.validate(s.history))

    def test_restore_after_a_crash_mid_tools_reissues_nothing_and_truncates_a_torn_tail(self):
        s = ee.create(CONFIG)
        out = feed(s, [{"input": "prompt", "text": "hi", "now": "t0"}] + tool_call_reply(1, "t1"))
        log = log_of(out) + b'{"tool_res'
        restored, outputs = ee.restore(CONFIG, log)
        self.assertEqual(outputs[0], {"output": "truncate_log", "len": len(log) - 10})
        self.assertNotIn("dispatch", [o["output"] for o in outputs])
        self.assertEqual(outputs[-1], {"output": "turn_ended", "outcome": {"outcome": "crashed"}})
        self.assertEqual(restored.history[-1], rp.user_text("[Request interrupted: runtime stopped unexpectedly]"))
        self.assertEqual(restored.history[-3]["content"][0]["content"], rp.INTERRUPTED_RESULT_TEXT)
        again, more = ee.restore(CONFIG, log[: len(log) - 10] + log_of(outputs))
        self.assertEqual(more, [])
        self.assertEqual(again.history, restored.history)

    def test_a_provider_id_reused_in_a_later_reply_is_kept_under_the_first_free_suffix(self):
        s = ee.create(CONFIG)
        result = lambda op, tid: {"input": "tool_result", "op": op,
                                  "outcome": {"tool_use_id": tid, "content": "ok", "is_error": False}}
        out = feed(s, [{"input": "prompt", "text": "hi", "now": "t0"}] + tool_call_reply(1, "exec_0"))
        out += feed(s, [result(2, "exec_0")] + tool_call_reply(3, "exec_0"))
        self.assertEqual(s.pending()["calls"][0]["id"], "exec_0-2")
        out += feed(s, [result(4, "exec_0-2")] + tool_call_reply(5, "exec_0"))
        self.assertEqual(s.pending()["calls"][0]["id"], "exec_0-3")
        self.assertIsNone(rp.validate(s.history, allow_pending=True))
        restored, _ = ee.restore(CONFIG, log_of(out))
        self.assertEqual([c["id"] for m in restored.history for c in rp.tool_calls(m)], ["exec_0", "exec_0-2", "exec_0-3"])

    def test_an_id_rewound_out_of_the_history_stays_taken_across_a_restore(self):
        s = ee.create(CONFIG)
        out = feed(s, [{"input": "prompt", "text": "hi", "now": "t0"}] + tool_call_reply(1, "t1"))
        out += s.handle({"input": "cancel", "cause": "user"})
        out += s.handle({"input": "rewind", "index": 0})
        restored, _ = ee.restore(CONFIG, log_of(out))
        for session, first_op in ((s, 3), (restored, 3)):
            feed(session, [{"input": "prompt", "text": "again", "now": "t1"}] + tool_call_reply(first_op, "t1"))
            self.assertEqual(session.pending()["calls"][0]["id"], "t1-2")

    def test_a_corrupt_record_is_a_refused_restore(self):
        with self.assertRaises(RestoreFailed):
            ee.restore(CONFIG, b"not json\n")


class Protocol(unittest.TestCase):
    def test_the_engine_says_hello_and_answers_with_deltas_over_the_pipe(self):
        proc = subprocess.run(
            [sys.executable, os.path.join(HERE, "example_engine.py")],
            input="\n".join(
                json.dumps(r)
                for r in [
                    {"req": "create", "config": CONFIG},
                    {"req": "input", "n": 1, "input": {"input": "prompt", "text": "hi", "now": "t0"}},
                    {"req": "input", "n": 2, "input": {"input": "rewind", "index": 9}},
                ]
            )
            + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        lines = [json.loads(l) for l in proc.stdout.splitlines()]
        self.assertEqual(lines[0], {"hello": "turnsim-engine", "protocol": 1, "engine": "python-example"})
        self.assertEqual(lines[1]["fixed_texts"], [rp.TRUNCATION_RESUME_TEXT, rp.COMPACTION_NOTICE])
        prompt = lines[2]
        self.assertEqual(prompt["history"]["keep"], 0)
        self.assertEqual(len(prompt["history"]["append"]), 1)
        self.assertEqual(prompt["outputs"][2]["request"]["messages"], 1)
        base64.b64decode(prompt["outputs"][0]["bytes"], validate=True)
        refused = lines[3]
        self.assertTrue(refused["refused"].startswith("busy: op#1 is outstanding"))
        self.assertEqual(refused["history"], {"keep": 1, "append": []})
        self.assertEqual(refused["state"], prompt["state"])


if __name__ == "__main__":
    unittest.main()
