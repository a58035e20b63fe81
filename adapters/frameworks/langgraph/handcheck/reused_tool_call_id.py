#!/usr/bin/env python3
"""Hand check, no turnsim: LangGraph's prebuilt agent keeps a tool-call id the model
repeats in a later reply verbatim, so one thread holds two different calls (and two
results) with one id, and the next request carries both (an Anthropic request with
duplicate tool_use ids is refused; the results cannot be told apart by id).

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


class Scripted(BaseChatModel):
    """Numbers its calls per reply, as some OpenAI-compatible servers do."""

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
        n = len(seen)
        if n <= 2:
            name, args = ("read_file", '{"path": "a.rs"}') if n == 1 else ("search", '{"q": "b"}')
            call = {"name": name, "args": args, "id": "exec_0", "index": 0}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id=f"m{n}", tool_call_chunks=[call]))
            return
        yield ChatGenerationChunk(message=AIMessageChunk(content="done", id=f"m{n}"))


@tool
async def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
async def search(q: str) -> str:
    """Search."""
    return f"hits for {q}"


async def main():
    agent = create_react_agent(Scripted(), [read_file, search], checkpointer=InMemorySaver())
    await agent.ainvoke({"messages": [HumanMessage("prompt 1")]}, {"configurable": {"thread_id": "t"}})
    last = seen[-1]
    calls = [(c["name"], c["id"]) for m in last if isinstance(m, AIMessage) for c in m.tool_calls]
    results = [(m.content, m.tool_call_id) for m in last if isinstance(m, ToolMessage)]
    print("tool calls in the last request:", calls)
    print("tool results in the last request:", results)
    ids = [i for _, i in calls]
    return 0 if len(ids) == 2 and ids[0] == ids[1] and len({r for _, r in results}) == 1 else 1


raise SystemExit(asyncio.run(main()))
