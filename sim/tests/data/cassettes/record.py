"""Records the vcrpy cassettes of this folder: official SDK clients (anthropic,
openai) driven through a small tool loop against `turnsim serve`, each exchange
written by vcrpy itself, so the files are what vcrpy writes for real SDK traffic.

Why a script and not copies: the cassettes are ours, made from traffic we can replay
(see README.md here for how to run it and what each file holds). Some runs plant a
client bug on purpose (a dropped tool result, an edited earlier message), so the
expected finding of each file is known before it is judged.

Usage: python record.py BASE_URL NAME   (NAME as listed in RUNS)
"""

import gzip
import http.server
import sys
import subprocess
import urllib.request

import anthropic
import openai
import vcr

TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": TOOL["name"],
        "description": TOOL["description"],
        "parameters": TOOL["input_schema"],
    },
}
RESP_TOOL = {
    "type": "function",
    "name": TOOL["name"],
    "description": TOOL["description"],
    "parameters": TOOL["input_schema"],
}
RESULT = "sunny, 21 C"


def anthropic_loop(base, stream, bug):
    client = anthropic.Anthropic(base_url=base, api_key="test", max_retries=0)
    messages = [{"role": "user", "content": "What is the weather in Lyon?"}]
    for step in range(3):
        kw = dict(
            model="claude-sonnet-4-5",
            max_tokens=2048,
            thinking={"type": "enabled", "budget_tokens": 1024},
            tools=[TOOL],
            messages=messages,
        )
        try:
            if stream:
                with client.messages.stream(**kw) as s:
                    reply = s.get_final_message()
            else:
                reply = client.messages.create(**kw)
        except anthropic.BadRequestError:
            # The server refuses a broken history with the API's 400, as the API would.
            break
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        calls = [b for b in reply.content if b.type == "tool_use"]
        if not calls:
            break
        results = [{"type": "tool_result", "tool_use_id": c.id, "content": RESULT} for c in calls]
        if bug == "drop_result" and step == 1:
            # The planted bug: this turn's tool result is never sent.
            results = [{"type": "text", "text": "Never mind, and Paris?"}]
        messages.append({"role": "user", "content": results})


def chat_loop(base, stream, bug):
    client = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)
    messages = [
        {"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": "What is the weather in Lyon?"},
    ]
    for step in range(3):
        if stream:
            calls, text = {}, ""
            for chunk in client.chat.completions.create(
                model="gpt-4o", messages=messages, tools=[CHAT_TOOL], stream=True
            ):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        c = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        c["id"] = tc.id or c["id"]
                        if tc.function:
                            c["name"] += tc.function.name or ""
                            c["arguments"] += tc.function.arguments or ""
            calls = [calls[i] for i in sorted(calls)]
        else:
            reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[CHAT_TOOL])
            m = reply.choices[0].message
            text = m.content or ""
            calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in m.tool_calls or []]
        assistant = {"role": "assistant", "content": text or None}
        if calls:
            assistant["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ]
        messages.append(assistant)
        if not calls:
            break
        for c in calls:
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": RESULT})
        if bug == "edit_history" and step == 1:
            # The planted bug: an earlier tool result is rewritten in the history.
            messages[3] = dict(messages[3], content="rainy, 12 C")


def responses_loop(base, stream, bug):
    client = openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)
    items = [{"role": "user", "content": "What is the weather in Lyon?"}]
    previous = None
    for step in range(3):
        kw = dict(model="gpt-5", tools=[RESP_TOOL], reasoning={"effort": "low"}, input=items)
        if bug == "chained":
            # Stored responses, continued by id: only the new items are sent.
            if previous:
                kw.update(previous_response_id=previous)
        elif bug != "item_reference":
            kw.update(store=False, include=["reasoning.encrypted_content"])
        if stream:
            with client.responses.stream(**kw) as s:
                reply = s.get_final_response()
        else:
            reply = client.responses.create(**kw)
        output = [o.model_dump(exclude_none=True) for o in reply.output]
        calls = [o for o in output if o["type"] == "function_call"]
        if bug == "chained":
            previous, items = reply.id, []
        elif bug == "item_reference":
            # Stored reasoning sent back by reference, as the AI SDK does by default.
            items = items + [
                {"type": "item_reference", "id": o["id"]} if o["type"] == "reasoning" else o
                for o in output
            ]
        elif bug == "drop_reasoning" and step == 0:
            # The planted bug: the reasoning items are not sent back with their calls.
            items = items + [o for o in output if o["type"] != "reasoning"]
        else:
            items = items + output
        if not calls:
            break
        for c in calls:
            items.append({"type": "function_call_output", "call_id": c["call_id"], "output": RESULT})


def gzipping_proxy(base):
    """Serves, in this process, a proxy in front of `base` that compresses every answer
    with gzip, as the real APIs do for JSON replies (vcrpy then keeps the body
    compressed, as `!!binary`). It runs in a process of its own (see `gzipped`), so
    vcrpy does not record its upstream calls too."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
            req = urllib.request.Request(base + self.path, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req) as r:
                    status, reply, kind = r.status, r.read(), r.headers["content-type"]
            except urllib.error.HTTPError as e:
                status, reply, kind = e.code, e.read(), e.headers["content-type"]
            packed = gzip.compress(reply, mtime=0)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(packed)))
            self.end_headers()
            self.wfile.write(packed)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def gzipped(loop):
    def run(base, stream, bug):
        proxy = subprocess.Popen(
            [sys.executable, __file__, "--proxy", base], stdout=subprocess.PIPE, text=True
        )
        try:
            loop(proxy.stdout.readline().strip(), stream, bug)
        finally:
            proxy.terminate()
            proxy.wait()

    return run


RUNS = {
    "vcrpy-anthropic-stream": (anthropic_loop, True, None),
    "vcrpy-anthropic-json": (anthropic_loop, False, None),
    "vcrpy-anthropic-dropped-result": (anthropic_loop, False, "drop_result"),
    "vcrpy-chat-stream": (chat_loop, True, None),
    "vcrpy-chat-edited-history": (chat_loop, False, "edit_history"),
    "vcrpy-responses-stream": (responses_loop, True, None),
    "vcrpy-responses-chained": (responses_loop, False, "chained"),
    "vcrpy-responses-dropped-reasoning": (responses_loop, True, "drop_reasoning"),
    "vcrpy-responses-item-reference": (responses_loop, False, "item_reference"),
    "vcrpy-anthropic-gzip": (gzipped(anthropic_loop), False, None),
    "vcrpy-responses-gzip-dropped-reasoning": (gzipped(responses_loop), False, "drop_reasoning"),
    # vcrpy's other serializer: the same cassette as JSON.
    "vcrpy-json-responses-stream": (responses_loop, True, None),
}


def main():
    if sys.argv[1] == "--proxy":
        return gzipping_proxy(sys.argv[2])
    base, name = sys.argv[1], sys.argv[2]
    loop, stream, bug = RUNS[name]
    # Only the SDKs' headers that say who sent what are kept; the key is not a secret
    # here but is dropped all the same, as a cassette should.
    serializer = "json" if "-json-" in name else "yaml"
    recorder = vcr.VCR(
        record_mode="all", filter_headers=["authorization", "x-api-key"], serializer=serializer
    )
    with recorder.use_cassette(f"{name}.{serializer}"):
        loop(base, stream, bug)


if __name__ == "__main__":
    main()
