#!/usr/bin/env python3
"""LangGraph's prebuilt tool-calling agent as a turnsim engine (engine protocol v1).

The application under test is the thin one LangGraph's docs describe:
`create_react_agent(model, tools, prompt=system, checkpointer=saver)`, one conversation
thread (`thread_id`), each prompt streamed with
`agent.astream({"messages": [...]}, config, stream_mode="messages")`, a stop being the
cancellation of the task that runs the stream, and after a restart the same thread
read back from the checkpointer and continued with the next prompt. Before a prompt the
application closes out tool calls an interrupted run left unanswered by passing
ToolMessages for them with the prompt, as LangGraph's INVALID_CHAT_HISTORY page tells
it to (else the agent refuses the thread). Compaction and rewind are state updates
(`aupdate_state` with `RemoveMessage`), as the docs show for managing history.

Guarantee: every reply is computed by running the engine's private event loop until
every task waits on a harness input (no timers, no threads, no wall clock), so the
outputs are a function of the inputs; a loop that would wait on anything else stops
the engine with a clear error instead of guessing. What is adapter, not framework:
the chat model (harness_model.py), the checkpointer's storage (log_saver.py), the wire
form (wire.py), the pinned ids and clock (pins.py), the event-loop settling, the op
bookkeeping the protocol needs (send and dispatch records in the log, so ops are never
reused across restarts) and the `turn_start` / `turn_end` records that tell a restart
a turn was cut short.
"""

import asyncio
import hashlib
import json
import os
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor

os.environ["LANGSMITH_TRACING"] = "false"  # nothing may reach the network
os.environ["LANGCHAIN_TRACING_V2"] = "false"
os.environ.pop("LANGSMITH_API_KEY", None)
os.environ.pop("LANGCHAIN_API_KEY", None)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import pins  # noqa: E402

pins.install()

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402
from langgraph.prebuilt import ToolRuntime  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # create_react_agent's deprecation notice (see docs/frameworks.md)
    from langgraph.prebuilt import create_react_agent  # noqa: E402

import harness_model as hm  # noqa: E402
from log_saver import LogSaver  # noqa: E402
from turnsim_engine import Refused, RestoreFailed, run  # noqa: E402
from wire import WireCache, groups  # noqa: E402

THREAD = "turnsim-session"
COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]"
def directives(messages):
    """The user's prompts that stand in `messages`, oldest first: a compaction keeps them
    verbatim after its notice (the application's user messages are prompts, the notice
    aside), since the summary paraphrases exactly what the user asked."""
    return [m.content for m in messages if isinstance(m, HumanMessage) and isinstance(m.content, str) and m.content != COMPACTION_NOTICE]


UNANSWERED = "Interrupted before a result was recorded; the tool may have run. Check before retrying."


class InlineExecutor(ThreadPoolExecutor):
    """The loop's default executor runs what it is given at once, on the loop's thread.
    LangGraph sends a graph's sync functions to the default executor (create_react_agent's
    routing function `should_continue` is one); they are pure, so running them inline
    gives the same result with no thread timing in the run."""

    def submit(self, fn, *args, **kwargs):
        fut = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:  # handed to the awaiting task, as a thread would
            fut.set_exception(e)
        return fut


class Engine:
    def __init__(self, config, saver_records=(), next_op=1):
        self.config = dict(config)
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(InlineExecutor())
        self.wire = WireCache()
        self.out = []
        self.saver = LogSaver(self.persist)
        for kind, r in saver_records:
            self.saver.apply(kind, r)
        self.next_op = next_op
        self.version = 0  # bumped by every input that changes the state (the digest)
        self.task = None  # the turn: the application around the stream
        self.graph_task = None  # the task running the graph's stream (what a stop cancels)
        self.gen = None  # the Generation in flight
        self.tools = None  # {"op", "calls", "futures", "results"} for the dispatched batch
        self.starting = []  # tool calls started since the last dispatch
        self.cancel_cause = None
        self.agent = self.make_agent()

    # --- the application -----------------------------------------------------------

    def make_agent(self):
        model = hm.HarnessChatModel(on_request=self.on_request, on_end=self.on_end)
        tools = [self.make_tool(t) for t in self.config["tools"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return create_react_agent(model, tools, prompt=self.config["system"] or None, checkpointer=self.saver)

    def make_tool(self, spec):
        async def call(runtime: ToolRuntime, **args):
            fut = self.loop.create_future()
            self.starting.append(({"id": runtime.tool_call_id, "name": spec["name"], "input": args}, fut))
            outcome = await fut
            if outcome.get("is_error"):
                raise ToolException(outcome["content"])
            return outcome["content"]

        return StructuredTool(
            name=spec["name"],
            description=spec.get("description") or "",
            args_schema=spec.get("input_schema") or {"type": "object", "properties": {}},
            coroutine=call,
            handle_tool_error=True,
        )

    def run_config(self):
        # run_id is the documented way to name a run; the application names its own so
        # no random id reaches the checkpoint metadata.
        return {"configurable": {"thread_id": THREAD}, "run_id": pins.IDS.uuid4()}

    async def turn(self, text):
        self.persist({"turn_start": text})
        self.graph_task = asyncio.ensure_future(self.stream(text))
        try:
            outcome = await self.graph_task
        except asyncio.CancelledError:
            outcome = {"outcome": "cancelled", "reason": self.cancel_cause}
        except Exception as e:  # the run failed; the thread keeps its last checkpoint
            outcome = {"outcome": "failed", "reason": f"{type(e).__name__}: {e}"}
        self.graph_task = None
        self.persist({"turn_end": outcome})
        self.out.append({"output": "turn_ended", "outcome": outcome})

    async def stream(self, text):
        config = {"configurable": {"thread_id": THREAD}}
        state = await self.agent.aget_state(config)
        inputs = close_unanswered(state.values.get("messages", [])) + [HumanMessage(text)]
        async for _token, _meta in self.agent.astream({"messages": inputs}, self.run_config(), stream_mode="messages"):
            pass  # a UI renders the tokens here
        last = (await self.agent.aget_state(config)).values["messages"][-1]
        if isinstance(last, AIMessage) and last.response_metadata.get("stop_reason") == "max_tokens":
            return {"outcome": "max_tokens"}
        return {"outcome": "end_turn"}

    async def replace_history(self, messages):
        # As the agent's own node wrote it; an empty history as the tools node did,
        # because the agent's router reads the last message (IndexError on none). The
        # next prompt starts the graph afresh either way.
        await self.agent.aupdate_state(
            {"configurable": {"thread_id": THREAD}},
            {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]},
            as_node="agent" if messages else "tools",
        )

    # --- the harness side ------------------------------------------------------------

    def persist(self, record):
        # Keys in the order they came: the configure record holds the host's tool
        # schemas, and a restart must send them back byte for byte (prefix_stable).
        self.out.append({"output": "persist", "bytes": (json.dumps(record, separators=(",", ":")) + "\n").encode()})

    def fresh_op(self):
        op = self.next_op
        self.next_op += 1
        return op

    def on_request(self, messages, tools):
        op = self.fresh_op()
        system = "".join(m.content for m in messages if m.type == "system" and isinstance(m.content, str))
        request = {
            "system": system,
            "tools": tools,
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
            raise SystemExit(f"langgraph adapter: the run waits on a timer ({loop._scheduled[0]}); a deterministic run cannot")
        if self.starting:
            if self.tools_open():
                raise SystemExit("langgraph adapter: tools started while another batch is outstanding")
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
            raise SystemExit("langgraph adapter: a request and tools outstanding at once")

    def run_now(self, coro):
        """Runs an application step that waits on no harness input (a state update)."""
        task = self.loop.create_task(coro)
        self.settle()
        if not task.done():
            raise SystemExit("langgraph adapter: a state update waits on something")
        task.result()

    def tools_open(self):
        return self.tools is not None and any(not f.done() for f in self.tools["futures"].values())

    def take(self):
        out, self.out = self.out, []
        return out

    # --- protocol surface ------------------------------------------------------------

    @property
    def history(self):
        return self.wire.wire(self.saver.messages(THREAD))

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
            self.require_idle()
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
            if self.task is None or self.graph_task is None:
                return []
            self.version += 1
            pending = self.pending()
            if pending["pending"] != "none":
                self.out.append({"output": "abort", "op": pending["op"]})
            self.cancel_cause = i["cause"]
            self.graph_task.cancel()
        elif kind == "compact":
            self.require_idle()
            if i["summary"].strip() == "":
                raise Refused("empty input: the compaction summary is empty")
            self.version += 1
            kept = [HumanMessage(d) for d in directives(self.saver.messages(THREAD))]
            self.run_now(self.replace_history([HumanMessage(COMPACTION_NOTICE), *kept, AIMessage(i["summary"])]))
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
        grouped = groups(self.saver.messages(THREAD))
        if index > len(grouped):
            raise Refused(f"cannot rewind to message {index} of {len(grouped)}")
        kept = [m for _, ms in grouped[:index] for m in ms]
        if kept and isinstance(kept[-1], AIMessage) and kept[-1].tool_calls:
            raise Refused("invalid history: the cut leaves a tool call unanswered")
        self.version += 1
        self.run_now(self.replace_history(kept))


def close_unanswered(messages):
    """ToolMessages for the calls of the thread's last AI message that have none (a run
    stopped or crashed while its tools ran), as LangGraph's INVALID_CHAT_HISTORY page
    tells an application to pass with its next input."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last_ai is None:
        return []
    return [
        ToolMessage(UNANSWERED, tool_call_id=c["id"], name=c["name"], status="error")
        for c in last_ai.tool_calls
        if c["id"] not in answered
    ]


def create(config):
    pins.IDS.reset(0)
    return Engine(config)


def restore(config, log):
    """Reopens the thread through the checkpointer, as an application does after a
    restart; a turn that was running ends `crashed` (its unanswered tool calls are
    closed out with the next prompt, see close_unanswered)."""
    config = dict(config)
    end = log.rfind(b"\n") + 1
    out = []
    if end < len(log):
        out.append({"output": "truncate_log", "len": end})
    records, in_turn, last_op = [], False, 0
    for n, line in enumerate(log[:end].split(b"\n")[:-1]):
        try:
            (kind, r), = json.loads(line).items()
        except (ValueError, AttributeError, TypeError) as e:
            raise RestoreFailed(f"log corrupt at record {n}: {e}")
        if kind in ("put", "writes"):
            records.append((kind, r))
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
    # Ids after a restart must sort after every id the log holds (checkpoint ids order
    # the thread): each engine draws fewer than 2^16 of them.
    pins.IDS.reset(end << 16)
    try:
        engine = Engine(config, records, last_op + 1)
    except Exception as e:
        raise RestoreFailed(f"the checkpoints do not load: {type(e).__name__}: {e}")
    if in_turn:
        engine.persist({"turn_end": {"outcome": "crashed"}})
        engine.out.append({"output": "turn_ended", "outcome": {"outcome": "crashed"}})
    return engine, out + engine.take()


if __name__ == "__main__":
    run("langgraph", create, restore)
