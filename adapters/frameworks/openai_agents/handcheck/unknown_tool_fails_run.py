#!/usr/bin/env python3
"""Hand check, no turnsim: with the default `RunConfig` a model reply that calls a tool
the agent does not have (a hallucinated or mangled name such as `run shell`) fails the
whole run with `ModelBehaviorError`, instead of answering the call with an error the
model can read. `RunConfig(tool_not_found_behavior="return_error_to_model")` is the
documented opt-in; the default is `"raise_error"`.

Only the SDK and its own fake model (`agents.testing.ScriptedModel`). Exits 0 when the
behaviour shows (it prints the evidence), 1 when it does not.
"""

import asyncio
import os

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, ModelBehaviorError, Runner, function_tool  # noqa: E402
from agents.testing import ScriptedModel  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402


@function_tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    return "ran " + command


def call(name):
    return ResponseFunctionToolCall(id="fc_1", call_id="call_1", name=name, arguments='{"command": "ls"}', type="function_call", status="completed")


def text(t):
    return ResponseOutputMessage(id="msg_1", content=[ResponseOutputText(text=t, annotations=[], type="output_text")], role="assistant", status="completed", type="message")


async def main():
    model = ScriptedModel([[call("run shell")], [text("done")]])
    agent = Agent(name="assistant", model=model, tools=[run_shell])
    result = Runner.run_streamed(agent, "list the files")
    try:
        async for _ in result.stream_events():
            pass
    except ModelBehaviorError as e:
        print("the run failed:", repr(e))
        print("model calls made:", len(model.calls), "(the model never sees an error it could correct)")
        return 0 if len(model.calls) == 1 else 1
    print("the run ended:", result.final_output)
    return 1


raise SystemExit(asyncio.run(main()))
