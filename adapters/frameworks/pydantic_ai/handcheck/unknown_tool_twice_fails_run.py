#!/usr/bin/env python3
"""Hand check, no turnsim: a run whose model calls a tool the agent does not have is
answered once with a retry prompt ("Unknown tool name: ..."), but a second call to the
same unknown name in the same run ends the whole run with UnexpectedModelBehavior
("exceeded max retries count of 1"): the reply was well formed, the turn fails.

Only pydantic-ai and its own FunctionModel (a fake model). Exits 0 when the behaviour
shows (it prints the evidence), 1 when it does not.
"""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelRequest
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

seen_requests = []


async def stream(messages, info):
    seen_requests.append(messages)
    if len(seen_requests) <= 2:  # the model names a tool it was never offered, twice
        yield {0: DeltaToolCall(name="run shell", json_args='{"path": "a"}', tool_call_id=f"call_{len(seen_requests)}")}
    else:
        yield "done"


agent = Agent(FunctionModel(stream_function=stream))


@agent.tool_plain
async def read_file(path: str) -> str:
    return f"contents of {path}"


async def main():
    try:
        async with agent.run_stream("go") as result:
            await result.get_output()
        failure = None
    except UnexpectedModelBehavior as e:
        failure = str(e)
    # The answer to the first call goes back as a tool result the model can act on.
    retried = [p.content for m in seen_requests[1:2] for r in m if isinstance(r, ModelRequest) for p in r.parts if "Unknown tool name" in str(getattr(p, "content", ""))]
    print("model calls:", len(seen_requests))
    print("the first unknown call answered with:", retried)
    print("the run failed with:", failure)
    shows = len(seen_requests) == 2 and bool(retried) and failure is not None and "exceeded max retries" in failure
    return 0 if shows else 1


raise SystemExit(asyncio.run(main()))
