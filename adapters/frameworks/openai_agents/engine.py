#!/usr/bin/env python3
"""The OpenAI Agents SDK's own turn loop as a turnsim engine (engine protocol v1).

The application under test is the one the SDK's docs describe for streaming with tools
and memory: `Agent(name, instructions, model, tools=[FunctionTool(...)])`, each prompt
run with `Runner.run_streamed(agent, prompt, session=session)` and its
`stream_events()` consumed to the end; the session (log_session.py) is the only memory,
so what the SDK saves in it, when, and what it loads after a restart are the SDK's
own. A cancel is the documented `RunResultStreaming.cancel()` (immediate), after which
the application keeps consuming `stream_events()` as the docs ask. A tool body awaits
the harness's result and returns its text (the documented way for a tool to report an
error to the model is to return the message). The model (harness_model.py) relays the
harness's stream.

Guarantee: every reply is computed by running the engine's private event loop until
every task waits on a harness input (no timers, no threads, no wall clock), so the
outputs are a function of the inputs; a loop that would wait on anything else stops
the engine with a clear error instead of guessing. Tracing is off the two documented
ways (`OPENAI_AGENTS_DISABLE_TRACING=1` and `RunConfig(tracing_disabled=True)`): it
would start an exporter thread and try the network. What is adapter, not framework:
the event-loop settling, the op bookkeeping the protocol needs (send and dispatch
records in the log, so ops are never reused across restarts), the `turn_start` /
`turn_end` records that tell a restart a turn was cut short, and the application's
compaction / rewind (one `reset` record of the session's items).
"""

import asyncio
import hashlib
import json
import os
import sys

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from agents import Agent, FunctionTool, RunConfig, Runner, set_tracing_disabled  # noqa: E402

import harness_model as hm  # noqa: E402
from log_session import LogSession, replay  # noqa: E402
from turnsim_engine import Refused, RestoreFailed, run  # noqa: E402
from wire import WireCache, role_blocks, tool_output  # noqa: E402

set_tracing_disabled(True)
COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]"


def directives(items):
    """The user's prompts that stand in the session's `items`, oldest first: a compaction
    keeps them verbatim after its notice (the application's user items with text
    content are prompts, the notice aside), since the summary paraphrases exactly what
    the user asked."""
    return [
        it["content"]
        for it in items
        if isinstance(it, dict) and it.get("role") == "user" and isinstance(it.get("content"), str) and it["content"] != COMPACTION_NOTICE
    ]
# The SDK's default of 10 model calls per run is an application's choice of guard; the
# simulator's turns may use more tool rounds than that, and a guard that fails the turn
# is not what is under test.
MAX_TURNS = 1000


class Engine:
    def __init__(self, config, items=None, next_op=1):
        self.config = dict(config)
        self.loop = asyncio.new_event_loop()
        self.wire = WireCache()
        self.session = LogSession(self.config["session_key"], self.persist, items)
        self.next_op = next_op
        self.version = 0  # bumped by every input that changes the state (the digest)
        self.out = []
        self.task = None
        self.result = None  # the RunResultStreaming of the turn in flight
        self.cancel_cause = None
        self.gen = None  # the Generation in flight
        self.tools = None  # {"op", "calls", "futures", "results"} for the dispatched batch
        self.starting = []  # tool calls started since the last dispatch
        self.agent = self.make_agent()

    # --- the application -----------------------------------------------------------

    def make_agent(self):
        tools = [
            FunctionTool(
                name=t["name"],
                description=t.get("description") or "",
                params_json_schema=t.get("input_schema") or {"type": "object"},
                on_invoke_tool=self.tool_function(t["name"]),
                strict_json_schema=False,
            )
            for t in self.config["tools"]
        ]
        model = hm.HarnessModel(self.on_request, self.on_end)
        return Agent(name="assistant", instructions=self.config["system"], model=model, tools=tools)

    def tool_function(self, name):
        async def invoke(ctx, args):
            fut = self.loop.create_future()
            self.starting.append(({"id": ctx.tool_call_id, "name": name, "input": json.loads(args or "{}")}, fut))
            outcome = await fut
            return tool_output(outcome["content"])

        return invoke

    async def turn(self, text):
        self.persist({"turn_start": text})
        outcome = {"outcome": "end_turn"}
        config = RunConfig(tracing_disabled=True)
        try:
            self.result = Runner.run_streamed(self.agent, text, session=self.session, run_config=config, max_turns=MAX_TURNS)
            async for _ in self.result.stream_events():
                pass
            if self.cancel_cause is not None:
                outcome = {"outcome": "cancelled", "reason": self.cancel_cause}
        except Exception as e:
            if self.cancel_cause is not None:
                outcome = {"outcome": "cancelled", "reason": self.cancel_cause}
            else:
                outcome = {"outcome": "failed", "reason": f"{type(e).__name__}: {e}"}
        self.result = None
        self.cancel_cause = None
        self.persist({"turn_end": outcome})
        self.out.append({"output": "turn_ended", "outcome": outcome})

    # --- the harness side ------------------------------------------------------------

    def persist(self, record):
        # Keys in the order they came: the configure record holds the host's tool
        # schemas, and a restart must send them back byte for byte (prefix_stable).
        self.out.append({"output": "persist", "bytes": (json.dumps(record, separators=(",", ":")) + "\n").encode()})

    def fresh_op(self):
        op = self.next_op
        self.next_op += 1
        return op

    def on_request(self, instructions, items, tools):
        op = self.fresh_op()
        request = {
            "system": instructions or "",
            "tools": [{"name": t.name, "description": t.description or "", "input_schema": t.params_json_schema} for t in tools],
            "messages": self.wire.wire(items if isinstance(items, list) else [{"role": "user", "content": items}]),
            "cache": {"session_key": self.config["session_key"], "breakpoints": []},
        }
        self.persist({"send": op})
        self.out.append({"output": "send", "op": op, "request": request})
        self.gen = hm.Generation(op)
        return self.gen

    def on_end(self, gen):
        if self.gen is gen:
            self.gen = None

    def settle(self):
        """Runs the loop until no task can run without a harness input."""
        loop = self.loop

        async def until_quiet():
            while True:
                await asyncio.sleep(0)
                if not loop._ready:  # only this task was runnable
                    return

        loop.run_until_complete(until_quiet())
        if loop._scheduled:
            raise SystemExit(f"openai-agents adapter: the run waits on a timer ({loop._scheduled[0]}); a deterministic run cannot")
        if self.starting:
            if self.tools_open():
                raise SystemExit("openai-agents adapter: tools started while another batch is outstanding")
            op = self.fresh_op()
            calls = [c for c, _ in self.starting]
            self.tools = {"op": op, "calls": calls, "futures": {c["id"]: f for c, f in self.starting}, "results": set()}
            self.starting = []
            self.persist({"dispatch": {"op": op, "calls": calls}})
            self.out.append({"output": "dispatch", "op": op, "calls": calls})
        if self.task is not None and self.task.done():
            exc = self.task.exception()
            self.task = None
            self.gen = None
            self.tools = None
            if exc is not None:
                raise exc
        if self.gen is not None and self.tools_open():
            raise SystemExit("openai-agents adapter: a request and tools outstanding at once")

    def tools_open(self):
        return self.tools is not None and any(not f.done() for f in self.tools["futures"].values())

    def take(self):
        out, self.out = self.out, []
        return out

    # --- protocol surface ------------------------------------------------------------

    @property
    def history(self):
        return self.wire.wire(self.session.items)

    def pending(self):
        if self.task is None:
            return {"pending": "none"}
        if self.tools_open():
            return {"pending": "tools", "op": self.tools["op"], "calls": self.tools["calls"]}
        if self.gen is not None:
            return {"pending": "generation", "op": self.gen.op}
        return {"pending": "none"}

    def idle(self):
        return self.task is None

    def fixed_texts(self):
        return [COMPACTION_NOTICE]

    def state(self):
        view = [self.version, self.next_op, [id(m) for m in self.history]]
        return hashlib.blake2b(json.dumps(view).encode(), digest_size=16).hexdigest()

    def handle(self, i):
        kind = i["input"]
        if kind == "prompt":
            if self.task is not None:
                raise Refused("busy: a turn is running")
            if i["text"] == "":
                raise Refused("empty input: the prompt is empty")
            self.version += 1
            self.task = self.loop.create_task(self.turn(i["text"]))
        elif kind == "stream":
            if self.gen is None or self.gen.op != i["op"] or self.task is None:
                return []  # stale
            self.version += 1
            self.gen.queue.put_nowait(i["event"])
        elif kind == "tool_result":
            t, o = self.tools, i["outcome"]
            if t is None or t["op"] != i["op"] or o["tool_use_id"] not in t["futures"] or o["tool_use_id"] in t["results"]:
                return []  # stale, unknown or duplicate
            fut = t["futures"][o["tool_use_id"]]
            t["results"].add(o["tool_use_id"])
            if fut.done():  # the SDK stopped waiting for it (cancelled)
                return []
            self.version += 1
            fut.set_result(o)
        elif kind == "cancel":
            if self.task is None or self.cancel_cause is not None:
                return []
            self.version += 1
            pending = self.pending()
            if pending["pending"] != "none":
                self.out.append({"output": "abort", "op": pending["op"]})
            self.cancel_cause = i["cause"]
            if self.result is not None:
                self.result.cancel()
        elif kind == "compact":
            self.require_idle()
            if i["summary"].strip() == "":
                raise Refused("empty input: the compaction summary is empty")
            self.version += 1
            notice = {"role": "user", "content": COMPACTION_NOTICE}
            summary = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": i["summary"], "annotations": []}]}
            kept = [{"role": "user", "content": d} for d in directives(self.session.items)]
            self.session.reset([notice, *kept, summary])
        elif kind == "rewind":
            self.require_idle()
            self.rewind(i["index"])
        elif kind == "configure":
            self.require_idle()
            self.version += 1
            self.config["system"], self.config["tools"] = i["system"], i["tools"]
            self.persist({"configure": {"system": i["system"], "tools": i["tools"]}})
            self.agent = self.make_agent()
        else:
            raise Refused(f"unknown input {kind!r}")
        self.settle()
        return self.take()

    def require_idle(self):
        if self.task is not None:
            raise Refused("busy: a turn is running")

    def rewind(self, index):
        # The harness counts wire messages: cut the items at the index-th message's start.
        items = self.session.items
        starts, role = [], None  # item index where each wire message starts
        for n, item in enumerate(items):
            r, blocks = role_blocks(item)
            if r is None:
                continue
            if r != role:
                starts.append(n)
                role = r
        if index > len(starts) or len(starts) != len(self.history):
            raise Refused(f"cannot rewind to message {index} of {len(self.history)}")
        kept = items[: starts[index]] if index < len(starts) else list(items)
        last = self.wire.wire(kept)[-1:] if kept else []
        if last and last[0]["role"] == "assistant" and any(b["type"] == "tool_use" for b in last[0]["content"]):
            raise Refused("invalid history: the cut leaves a tool call unanswered")
        self.version += 1
        self.session.reset(kept)


def create(config):
    return Engine(config)


def restore(config, log):
    """Reloads the session, as an application does after a restart; a turn that was
    running ends `crashed`. The session's items are what the SDK saved, unrepaired."""
    config = dict(config)
    end = log.rfind(b"\n") + 1
    out = []
    if end < len(log):
        out.append({"output": "truncate_log", "len": end})
    items, in_turn, last_op = [], False, 0
    for n, line in enumerate(log[:end].split(b"\n")[:-1]):
        try:
            (kind, r), = json.loads(line).items()
        except (ValueError, AttributeError, TypeError) as e:
            raise RestoreFailed(f"log corrupt at record {n}: {e}")
        after = replay(items, kind, r)
        if after is not None:
            items = after
        elif kind == "turn_start":
            in_turn = True
        elif kind == "turn_end":
            in_turn = False
        elif kind == "send":
            last_op = max(last_op, r)
        elif kind == "dispatch":
            last_op = max(last_op, r["op"])
        elif kind == "configure":
            config["system"], config["tools"] = r["system"], r["tools"]
        else:
            raise RestoreFailed(f"log record {n}: unknown kind {kind!r}")
    engine = Engine(config, items, last_op + 1)
    if in_turn:
        engine.persist({"turn_end": {"outcome": "crashed"}})
        engine.out.append({"output": "turn_ended", "outcome": {"outcome": "crashed"}})
    return engine, out + engine.take()


if __name__ == "__main__":
    run("openai-agents", create, restore)
