#!/usr/bin/env python3
"""Hand check, no turnsim: a model reply whose text block holds only whitespace ("\\n\\n")
is kept by pydantic-ai as a `TextPart` and sent back, unchanged, by its own Anthropic
model (`AnthropicModel`) as a text block in the next request's messages; the Anthropic
API refuses such a block ("text content blocks must contain non-whitespace text").

Two shapes, each through a streamed request (`Agent.iter` with `node.stream`, as the
adapter drives pydantic-ai) and a plain one (`Agent.run`):
  before_call  the reply is a blank text block then a tool call; the request that
               carries the tool's result is recorded;
  alone        the reply's only text is blank and there is no call; a follow-up prompt
               on the same `message_history` is sent and its request is recorded.

Only pydantic-ai, the `anthropic` SDK it drives, and a loopback HTTP server written here
that stands in for the Messages API (SSE for a streamed request, one JSON message for a
plain one). Exits 0 when every shape/mode sends the blank block back (it prints the
assistant messages it saw), 1 when any does not.
"""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

BLANK = "\n\n"
requests = []  # the JSON body of every /v1/messages request, in order
replies = []  # what the server answers next: (blocks, stop_reason)


def sse(blocks, stop):
    def ev(kind, **data):
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    out = [ev("message_start", message={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 0}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(ev("content_block_start", index=i, content_block={"type": "text", "text": ""}))
            out.append(ev("content_block_delta", index=i, delta={"type": "text_delta", "text": b["text"]}))
        else:
            out.append(ev("content_block_start", index=i, content_block={**b, "input": {}}))
            out.append(ev("content_block_delta", index=i, delta={"type": "input_json_delta", "partial_json": json.dumps(b["input"])}))
        out.append(ev("content_block_stop", index=i))
    out.append(ev("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage={"output_tokens": 1}))
    out.append(ev("message_stop"))
    return "".join(out).encode()


class Api(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        requests.append(body)
        blocks, stop = replies.pop(0)
        if body.get("stream"):
            data, kind = sse(blocks, stop), "text/event-stream"
        else:
            msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
            data, kind = json.dumps(msg).encode(), "application/json"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
threading.Thread(target=server.serve_forever, daemon=True).start()
provider = AnthropicProvider(api_key="not-a-key", base_url=f"http://127.0.0.1:{server.server_port}")
agent = Agent(AnthropicModel("claude-test", provider=provider))


@agent.tool_plain
def lookup(q: str) -> str:
    return f"found {q}"


async def run(prompt, streamed, history=None):
    if not streamed:
        return (await agent.run(prompt, message_history=history)).all_messages()
    async with agent.iter(prompt, message_history=history) as r:
        async for node in r:
            if Agent.is_model_request_node(node):
                async with node.stream(r.ctx) as s:
                    async for _ in s:
                        pass
    return r.result.all_messages()


def blank_sent(body):
    return [m for m in body["messages"] if m["role"] == "assistant" and {"type": "text", "text": BLANK} in m["content"]]


async def shape(name, streamed):
    requests.clear()
    if name == "before_call":
        replies[:] = [([{"type": "text", "text": BLANK}, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}], "tool_use"), ([{"type": "text", "text": "done"}], "end_turn")]
        await run("look x up", streamed)
    else:
        replies[:] = [([{"type": "text", "text": BLANK}], "end_turn"), ([{"type": "text", "text": "ok"}], "end_turn")]
        history = await run("say nothing", streamed)
        await run("go on", streamed, history)
    last = requests[-1]
    print(f"{name} ({'streamed' if streamed else 'plain'}): {len(requests)} request(s); the last one's assistant messages:")
    for m in last["messages"]:
        if m["role"] == "assistant":
            print("   ", json.dumps(m["content"]))
    sent = bool(blank_sent(last))
    print("    whitespace-only text block sent back:", sent)
    return sent


async def main():
    seen = [await shape(name, streamed) for name in ("before_call", "alone") for streamed in (True, False)]
    return 0 if all(seen) else 1


raise SystemExit(asyncio.run(main()))
