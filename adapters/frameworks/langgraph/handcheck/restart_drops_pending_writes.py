#!/usr/bin/env python3
"""Hand check, no turnsim: a process that dies after a task's writes were saved but
before the checkpoint that follows them leaves those writes pending; after the
restart `aget_state` shows them in the thread's messages, and the next prompt
discards them. Two cases, both with LangGraph's default durability:
  A. death right after the input step: `aget_state` shows prompt 1, the next prompt's
     request holds prompt 2 alone (prompt 1 is gone from the thread);
  B. death right after the model's reply (a tool call): `aget_state` shows the call,
     the application answers it as interrupted (the INVALID_CHAT_HISTORY page's fix),
     and the next request carries that tool result after no tool call at all (the
     call itself was discarded), a request the Messages API refuses.
The death is an InMemorySaver that stores nothing from the chosen step on (the process
was killed while writing); a fresh InMemorySaver over the same tables is the
restarted process, reading what was stored.

Only LangGraph (create_react_agent, InMemorySaver) and a scripted fake chat model.
Exits 0 while both cases show (it prints the evidence), 1 otherwise.
"""

import asyncio
import os
import warnings

os.environ["LANGSMITH_TRACING"] = "false"

from langchain_core.language_models.chat_models import BaseChatModel, agenerate_from_stream
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
from langgraph.prebuilt import create_react_agent  # noqa: E402

never = asyncio.Event()


class DiesAtStep(InMemorySaver):
    """Stores nothing more from the checkpoint of `step` on: the process died there
    (its put never completes, and nothing after it is stored)."""

    def __init__(self, step):
        super().__init__()
        self.dead_from = step
        self.dead = False
        self.released = asyncio.Event()

    async def aput(self, config, checkpoint, metadata, new_versions):
        if metadata.get("step", -1) >= self.dead_from:
            self.dead = True
        if self.dead:
            await self.released.wait()  # the kill: nothing of this put reaches storage
            return config
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        if not self.dead:
            await super().aput_writes(config, writes, task_id, task_path)

    def restarted(self):
        fresh = InMemorySaver()
        fresh.storage, fresh.writes, fresh.blobs = self.storage, self.writes, self.blobs
        return fresh


class Scripted(BaseChatModel):
    seen: list = []

    @property
    def _llm_type(self):
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        raise NotImplementedError("async only")

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        return await agenerate_from_stream(self._astream(messages))

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        # Calls a tool for prompt 1 alone: whether the dying process got to call the
        # model before the kill is thread timing, and the restart must not depend on it.
        if not any("prompt 2" in str(m.content) for m in messages):
            call = {"name": "run_shell", "args": '{"cmd": "make test"}', "id": "call_1", "index": 0}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id="m1", tool_call_chunks=[call]))
            return
        yield ChatGenerationChunk(message=AIMessageChunk(content="ok", id=f"m{len(self.seen)}"))


@tool
async def run_shell(cmd: str) -> str:
    """Run a command."""
    await never.wait()
    return "done"


def close_unanswered(messages):
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    ais = [m for m in messages if isinstance(m, AIMessage)]
    calls = ais[-1].tool_calls if ais else []
    return [ToolMessage("interrupted", tool_call_id=c["id"], status="error") for c in calls if c["id"] not in answered]


def show(messages):
    return [(type(m).__name__, m.content or [c["id"] for c in getattr(m, "tool_calls", [])] or getattr(m, "tool_call_id", "")) for m in messages]


async def case(die_at_step):
    saver = DiesAtStep(die_at_step)
    model = Scripted(seen=[])
    config = {"configurable": {"thread_id": "t"}}
    agent = create_react_agent(model, [run_shell], checkpointer=saver)
    task = asyncio.ensure_future(agent.ainvoke({"messages": [HumanMessage("prompt 1: fix the parser")]}, config))
    # Until the run reaches the step it dies at. LangGraph hands sync work to executor
    # threads, so this waits on the outcome with a deadline, not a count of loop turns.
    deadline = asyncio.get_running_loop().time() + 30
    while not saver.dead:
        await asyncio.sleep(0.005)
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit(f"the run did not reach step {die_at_step} within 30 s: nothing to judge")
    task.cancel()  # the process is gone; the saver keeps what it stored
    saver.released.set()
    try:
        await task
    except asyncio.CancelledError:
        pass
    agent = create_react_agent(model, [run_shell], checkpointer=saver.restarted())
    state = await agent.aget_state(config)
    shown = state.values.get("messages", [])
    inputs = [*close_unanswered(shown), HumanMessage("prompt 2: go on")]
    await agent.ainvoke({"messages": inputs}, config)
    sent = model.seen[-1]
    print(f"case dying at step {die_at_step}: aget_state after the restart: {show(shown)}")
    print(f"  the next request the model got: {show(sent)}")
    return shown, sent


async def main():
    shown_a, sent_a = await case(0)
    prompt_lost = any(isinstance(m, HumanMessage) and "prompt 1" in m.content for m in shown_a) and not any(
        isinstance(m, HumanMessage) and "prompt 1" in m.content for m in sent_a
    )
    shown_b, sent_b = await case(1)
    calls_sent = {c["id"] for m in sent_b if isinstance(m, AIMessage) for c in m.tool_calls}
    orphan = any(isinstance(m, AIMessage) and m.tool_calls for m in shown_b) and any(
        isinstance(m, ToolMessage) and m.tool_call_id not in calls_sent for m in sent_b
    )
    print("A: prompt 1 shown, then lost:", prompt_lost, "| B: a tool result answering no call sent:", orphan)
    return 0 if prompt_lost and orphan else 1


raise SystemExit(asyncio.run(main()))
