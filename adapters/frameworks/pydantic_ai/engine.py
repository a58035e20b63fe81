#!/usr/bin/env python3
"""pydantic-ai's own turn loop as a turnsim engine (engine protocol v1).

The application under test is the one pydantic-ai's docs describe for streaming with
tools: `Agent.iter(prompt, message_history=...)`, each `ModelRequestNode` streamed with
`node.stream(run.ctx)`, the history saved after every node as JSON through
`ModelMessagesTypeAdapter` and handed back as `message_history` after a restart, a
cancel being `AgentRun.cancel()` with `RunCancelled.all_messages()` kept. The model
(harness_model.py) relays the harness's stream; each tool awaits the harness's result.

Guarantee: every reply is computed by running the engine's private event loop until
every task waits on a harness input (no timers, no threads, no wall clock), so the
outputs are a function of the inputs; a loop that would wait on anything else stops
the engine with a clear error instead of guessing. What is adapter, not framework:
the event-loop settling, the op bookkeeping the protocol needs (receipts and dispatch
records in the log, so ops are never reused across restarts) and the `turn_start` /
`turn_end` records that tell a restart a turn was cut short.
"""

import asyncio
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import harness_model as hm  # noqa: E402  (pins the clock and ids before any run)
from pydantic_ai import Agent, Tool  # noqa: E402
from pydantic_ai.exceptions import RunCancelled, ToolFailed  # noqa: E402
from pydantic_ai.messages import ModelMessagesTypeAdapter, repair_messages, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart  # noqa: E402
from turnsim_engine import Refused, RestoreFailed, run  # noqa: E402

COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]"


def directives(messages):
    """The user's prompts that stand in `messages`, oldest first: a compaction keeps them
    verbatim after its notice (every text user-prompt part is a prompt, the notice
    aside), since the summary paraphrases exactly what the user asked."""
    return [
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str) and p.content != COMPACTION_NOTICE
    ]


def dump(messages):
    return ModelMessagesTypeAdapter.dump_python(messages, mode="json")


def load(data):
    return ModelMessagesTypeAdapter.validate_python(data)


class Engine:
    def __init__(self, config, messages=None, next_op=1):
        self.config = dict(config)
        self.loop = asyncio.new_event_loop()
        self.wire = hm.WireCache()
        self.messages = messages or []  # the application's saved conversation
        self.saved = dump(self.messages)  # what the log holds of it, for the delta
        self.next_op = next_op
        self.version = 0  # bumped by every input that changes the state (the digest)
        self.out = []
        self.task = None
        self.agent_run = None
        self.gen = None  # the Generation in flight
        self.tools = None  # {"op", "calls", "futures", "results"} for the dispatched batch
        self.starting = []  # tool calls started since the last dispatch
        self.agent = self.make_agent()

    # --- the application -----------------------------------------------------------

    def make_agent(self):
        tools = [
            Tool.from_schema(self.tool_function(t["name"]), t["name"], t.get("description"), t.get("input_schema") or {"type": "object"}, takes_ctx=True)
            for t in self.config["tools"]
        ]
        return Agent(hm.HarnessModel(self.on_request, self.on_end), instructions=self.config["system"], tools=tools)

    def tool_function(self, name):
        async def call(ctx, **args):
            fut = self.loop.create_future()
            self.starting.append(({"id": ctx.tool_call_id, "name": name, "input": args}, fut))
            outcome = await fut
            if outcome.get("is_error"):
                raise ToolFailed(outcome["content"])
            return hm.tool_content(outcome["content"])

        return call

    async def turn(self, text):
        self.persist({"turn_start": text})
        outcome = {"outcome": "end_turn"}
        try:
            async with self.agent.iter(text, message_history=self.messages) as agent_run:
                self.agent_run = agent_run
                async for node in agent_run:
                    if Agent.is_model_request_node(node):
                        # The request the node is about to send (the prompt, or the tool
                        # results) joins all_messages() only once the model answers; an
                        # application that must not lose it on a crash saves it now.
                        self.save([*agent_run.all_messages(), node.request])
                        async with node.stream(agent_run.ctx) as stream:
                            async for _ in stream:
                                pass
                    self.save(agent_run.all_messages())
            messages = agent_run.all_messages()
            last = messages[-1] if messages else None
            if isinstance(last, ModelResponse) and last.finish_reason == "length":
                outcome = {"outcome": "max_tokens"}
        except RunCancelled as e:
            messages = e.all_messages()
            outcome = {"outcome": "cancelled", "reason": self.cancel_cause}
        except Exception as e:  # the run failed; the application keeps what it saved,
            # closing out calls left unanswered as pydantic-ai tells it to (see restore)
            messages = repair_messages(load(self.saved))
            outcome = {"outcome": "failed", "reason": f"{type(e).__name__}: {e}"}
        self.agent_run = None
        self.save(messages)
        self.messages = messages
        self.persist({"turn_end": outcome})
        self.out.append({"output": "turn_ended", "outcome": outcome})

    def save(self, messages):
        """Saves the history as pydantic-ai's docs show (ModelMessagesTypeAdapter);
        appends when the saved history is a prefix, rewrites it otherwise."""
        data = dump(messages)
        n = len(self.saved)
        if data[:n] == self.saved:
            if len(data) > n:
                self.persist({"messages": data[n:]})
        else:
            self.persist({"reset": data})
        self.saved = data

    # --- the harness side ------------------------------------------------------------

    def persist(self, record):
        # Keys in the order they came: the configure record holds the host's tool
        # schemas, and a restart must send them back byte for byte (prefix_stable).
        self.out.append({"output": "persist", "bytes": (json.dumps(record, separators=(",", ":")) + "\n").encode()})

    def fresh_op(self):
        op = self.next_op
        self.next_op += 1
        return op

    def on_request(self, messages, params):
        op = self.fresh_op()
        request = {
            "system": hm.get_instructions(messages, params) or "",
            "tools": [{"name": t.name, "description": t.description or "", "input_schema": t.parameters_json_schema} for t in params.function_tools],
            "messages": self.wire.wire(messages),
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
            raise SystemExit(f"pydantic-ai adapter: the run waits on a timer ({loop._scheduled[0]}); a deterministic run cannot")
        if self.starting:
            if self.tools is not None and any(not f.done() for f in self.tools["futures"].values()):
                raise SystemExit("pydantic-ai adapter: tools started while another batch is outstanding")
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
        if self.gen is not None and self.tools is not None and self.tools_open():
            raise SystemExit("pydantic-ai adapter: a request and tools outstanding at once")

    def tools_open(self):
        return self.tools is not None and any(not f.done() for f in self.tools["futures"].values())

    def take(self):
        out, self.out = self.out, []
        return out

    # --- protocol surface ------------------------------------------------------------

    @property
    def history(self):
        live = self.agent_run.all_messages() if self.agent_run is not None else self.messages
        return self.wire.wire(live)

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
            if fut.done():  # the framework stopped waiting for it (cancelled)
                return []
            self.version += 1
            fut.set_result(o)
        elif kind == "cancel":
            if self.task is None:
                return []
            self.version += 1
            pending = self.pending()
            if pending["pending"] != "none":
                self.out.append({"output": "abort", "op": pending["op"]})
            self.cancel_cause = i["cause"]
            self.agent_run.cancel()
        elif kind == "compact":
            self.require_idle()
            if i["summary"].strip() == "":
                raise Refused("empty input: the compaction summary is empty")
            self.version += 1
            kept = [UserPromptPart(d) for d in directives(self.messages)]
            self.messages = [ModelRequest(parts=[UserPromptPart(COMPACTION_NOTICE), *kept]), ModelResponse(parts=[TextPart(i["summary"])])]
            self.save(self.messages)
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
        # The harness counts wire messages; every saved message renders to one.
        wire = self.history
        if index > len(wire) or len(wire) != len(self.messages):
            raise Refused(f"cannot rewind to message {index} of {len(wire)}")
        kept = self.messages[:index]
        last = kept[-1] if kept else None
        if isinstance(last, ModelResponse) and any(isinstance(p, ToolCallPart) for p in last.parts):
            raise Refused("invalid history: the cut leaves a tool call unanswered")
        self.version += 1
        self.messages = kept
        self.save(kept)


def create(config):
    hm.IDS.reset(0)
    return Engine(config)


def restore(config, log):
    """Reloads the saved history, as an application does after a restart; a turn that
    was running ends `crashed` (pydantic-ai itself closes out the tool calls it left
    unanswered, at the next request)."""
    config = dict(config)
    end = log.rfind(b"\n") + 1
    out = []
    if end < len(log):
        out.append({"output": "truncate_log", "len": end})
    saved, in_turn, last_op = [], False, 0
    for n, line in enumerate(log[:end].split(b"\n")[:-1]):
        try:
            (kind, r), = json.loads(line).items()
        except (ValueError, AttributeError, TypeError) as e:
            raise RestoreFailed(f"log corrupt at record {n}: {e}")
        if kind == "messages":
            saved = saved + r
        elif kind == "reset":
            saved = r
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
    try:
        messages = load(saved)
    except Exception as e:
        raise RestoreFailed(f"the saved history does not load: {e}")
    # pydantic-ai refuses a new prompt on a history whose last response has unanswered
    # calls and tells the application to close them out with repair_messages(), which
    # answers each as interrupted (outcome 'interrupted'). Only then: the repair also
    # joins adjacent requests (pydantic-ai does that itself before every request), and
    # applied to a history that needs nothing it rewrote the log at every restore, so a
    # restore between turns had work to do (durable_live, seed 237).
    last = messages[-1] if messages else None
    dangling = isinstance(last, ModelResponse) and any(isinstance(p, ToolCallPart) for p in last.parts)
    repaired = repair_messages(messages) if dangling else messages
    # Ids after a restart must not repeat the ones the saved history holds.
    hm.IDS.reset(end << 16)
    engine = Engine(config, messages, last_op + 1)
    engine.messages = repaired
    engine.save(repaired)
    if in_turn:
        engine.persist({"turn_end": {"outcome": "crashed"}})
        engine.out.append({"output": "turn_ended", "outcome": {"outcome": "crashed"}})
    return engine, out + engine.take()


if __name__ == "__main__":
    run("pydantic-ai", create, restore)
