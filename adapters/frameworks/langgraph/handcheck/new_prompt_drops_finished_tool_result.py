#!/usr/bin/env python3
"""Hand check, no turnsim: a run stopped while its tools run leaves the results of the
tools that finished as pending writes; `aget_state` shows them in the thread's
messages, but a new prompt on the thread discards them. An application that closes
out the calls `aget_state` shows unanswered, as LangGraph's INVALID_CHAT_HISTORY page
tells it to, then gets that very error: the finished call is unanswered after all, and
its result, which the tool did produce and the checkpointer saved, is gone.

Only LangGraph (create_react_agent, InMemorySaver) and a scripted fake chat model.
Exits 0 while the behaviour shows (it prints the evidence), 1 when it does not.
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

seen = []
never = asyncio.Event()


class Scripted(BaseChatModel):
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
        seen.append(list(messages))
        if len(seen) == 1:
            calls = [
                {"name": "search", "args": '{"q": "parser"}', "id": "call_fast", "index": 0},
                {"name": "run_shell", "args": '{"cmd": "make test"}', "id": "call_slow", "index": 1},
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id="m1", tool_call_chunks=calls))
            return
        yield ChatGenerationChunk(message=AIMessageChunk(content="ok", id=f"m{len(seen)}"))


@tool
async def search(q: str) -> str:
    """Search the code."""
    return "found parser.rs:42"


@tool
async def run_shell(cmd: str) -> str:
    """Run a command."""
    await never.wait()  # still running when the user stops the turn
    return "done"


def unanswered(messages):
    """What the INVALID_CHAT_HISTORY page tells an application to answer."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    ais = [m for m in messages if isinstance(m, AIMessage)]
    calls = ais[-1].tool_calls if ais else []
    return [ToolMessage("interrupted", tool_call_id=c["id"], status="error") for c in calls if c["id"] not in answered]


async def main():
    agent = create_react_agent(Scripted(), [search, run_shell], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    task = asyncio.ensure_future(agent.ainvoke({"messages": [HumanMessage("prompt 1: fix the parser")]}, config))
    # Until the fast tool's result is saved. LangGraph hands sync work to executor
    # threads, so this waits on the outcome with a deadline, not a count of loop turns.
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        await asyncio.sleep(0.005)
        state = await agent.aget_state(config)
        if any(isinstance(m, ToolMessage) for m in state.values.get("messages", [])):
            break
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit("the fast tool's result was not saved within 30 s: nothing to judge")
    task.cancel()  # the user presses stop while run_shell runs
    try:
        await task
    except asyncio.CancelledError:
        pass
    state = await agent.aget_state(config)
    shown = [(type(m).__name__, m.content) for m in state.values["messages"]]
    print("aget_state after the stop:", shown)
    closing = unanswered(state.values["messages"])
    print("the application closes out:", [m.tool_call_id for m in closing])
    error = None
    try:
        await agent.ainvoke({"messages": [*closing, HumanMessage("prompt 2: go on")]}, config)
    except ValueError as e:
        error = str(e).splitlines()[0]
    print("the next prompt:", error or "ran")
    after = (await agent.aget_state(config)).values["messages"]
    print("thread now:", [(type(m).__name__, m.content) for m in after])
    showed_result = ("ToolMessage", "found parser.rs:42") in shown
    lost = not any(isinstance(m, ToolMessage) and m.content == "found parser.rs:42" for m in after)
    refused = error is not None and "do not have a corresponding ToolMessage" in error
    return 0 if showed_result and lost and refused else 1


raise SystemExit(asyncio.run(main()))
