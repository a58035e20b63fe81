#!/usr/bin/env python3
"""Hand check, no turnsim: cancelling the task that streams a LangGraph agent run (the
documented way to stop it) drops the reply being streamed, whole: the text and even a
tool call whose block the user saw streamed in full are in no checkpoint, and nothing
records that the turn was stopped. The next prompt on the thread shows the model its
previous prompt followed by the new one, as if it had never answered.

Only LangGraph (create_react_agent, InMemorySaver) and a scripted fake chat model.
Exits 0 while the behaviour shows (it prints the evidence), 1 when it does not.
"""

import asyncio
import os
import warnings

os.environ["LANGSMITH_TRACING"] = "false"

from langchain_core.language_models.chat_models import BaseChatModel, agenerate_from_stream
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
from langgraph.prebuilt import create_react_agent  # noqa: E402

seen = []
hang = asyncio.Event()  # never set: the stream stalls after a finished tool call block


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
            yield ChatGenerationChunk(message=AIMessageChunk(content="Looking at the parser", id="m1"))
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id="m1", tool_call_chunks=[{"name": "read_file", "args": '{"path": "parser.rs"}', "id": "toolu_1", "index": 1}]))
            await hang.wait()
        yield ChatGenerationChunk(message=AIMessageChunk(content="ok", id=f"m{len(seen)}"))


@tool
async def read_file(path: str) -> str:
    """Read a file."""
    return "contents"


async def main():
    agent = create_react_agent(Scripted(), [read_file], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    shown = []

    async def run():
        async for chunk, _meta in agent.astream({"messages": [HumanMessage("prompt 1: fix the parser")]}, config, stream_mode="messages"):
            shown.append(chunk)

    task = asyncio.ensure_future(run())
    deadline = asyncio.get_running_loop().time() + 30
    while not any(getattr(c, "tool_call_chunks", None) for c in shown):
        await asyncio.sleep(0.005)
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit("no tool call was streamed within 30 s: nothing to judge")
    task.cancel()  # the user presses stop
    try:
        await task
    except asyncio.CancelledError:
        pass
    state = await agent.aget_state(config)
    kept = state.values["messages"]
    print("streamed to the user:", [c.content for c in shown], [c.tool_call_chunks for c in shown if c.tool_call_chunks])
    print("thread after the stop:", [(type(m).__name__, m.content) for m in kept])
    async for _ in agent.astream({"messages": [HumanMessage("prompt 2: go on")]}, config, stream_mode="messages"):
        pass
    sent = seen[-1]
    print("next request the model got:", [(type(m).__name__, m.content) for m in sent])
    no_reply = not any(isinstance(m, AIMessage) for m in kept) and not any(isinstance(m, AIMessage) for m in sent)
    only_prompts = all(isinstance(m, HumanMessage) for m in sent)
    return 0 if no_reply and only_prompts else 1


raise SystemExit(asyncio.run(main()))
