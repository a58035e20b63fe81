#!/usr/bin/env python3
"""Check by hand that the `openai` Python SDK reads turnsim's OpenAI output correctly.

Feeds the golden files our Rust writers produce (sim/tests/data/openai/golden/, pinned
byte for byte by sim/tests/openai_responses_pinning.rs) to the SDK through a throwaway
loopback HTTP server, and checks that the SDK turns them into the right objects: event
classes, accumulated final responses, tool calls with their arguments, usage, error
classes with code/param, and retries honouring our retry headers.

Stdlib only, plus the SDK under test. Run with a Python that has `openai` installed:

    /work/scratch/openai/venv/bin/python scripts/openai_parse_check.py

Exit status 0 when every check passes; otherwise the first failure is printed, exit 1.
"""

import http.server
import json
import pathlib
import sys
import threading
import time

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFailedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseReasoningItem,
)

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "sim/tests/data/openai/golden"


def golden(name):
    return (GOLDEN / name).read_bytes()


class Handler(http.server.BaseHTTPRequestHandler):
    """Plays the queued answers in order and records each request's path and headers."""

    queue = []
    seen = []

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        Handler.seen.append((self.path, dict(self.headers), json.loads(body) if body else None))
        status, headers, payload, ctype = Handler.queue.pop(0)
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        self.do_POST()

    def log_message(self, *args):
        pass


def serve():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def play(*answers):
    Handler.queue = list(answers)
    Handler.seen = []


def sse(name):
    return (200, {}, golden(name), "text/event-stream")


def js(name):
    return (200, {}, golden(name), "application/json")


CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


TOOLS_R = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]
TOOLS_C = [{"type": "function", "function": {"name": "run_shell", "parameters": {"type": "object"}}}]


@check
def responses_tool_stream_events_parse_into_their_classes(client):
    play(sse("responses-tool-stream.sse"))
    events = list(client.responses.create(model="gpt-5", input="x", tools=TOOLS_R, stream=True))
    types = [e.type for e in events]
    expect(types[0] == "response.created" and types[-1] == "response.completed", types)
    expect([e.sequence_number for e in events] == list(range(len(events))), "sequence numbers")
    done = [e for e in events if e.type == "response.output_item.done"]
    expect(isinstance(done[0].item, ResponseReasoningItem), type(done[0].item))
    expect(done[0].item.encrypted_content == "ts-encrypted-0001", done[0].item)
    call = done[1].item
    expect(isinstance(call, ResponseFunctionToolCall), type(call))
    expect(call.call_id == "call_ts0000000000000001" and call.name == "exec_command", call)
    expect(json.loads(call.arguments) == {"cmd": "echo hi"}, call.arguments)
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    expect(deltas == call.arguments, deltas)
    last = events[-1]
    expect(isinstance(last, ResponseCompletedEvent), type(last))
    expect(last.response.usage.total_tokens == 150, last.response.usage)
    expect(last.response.usage.input_tokens_details.cached_tokens == 64, last.response.usage)


@check
def responses_stream_helper_accumulates_the_final_response(client):
    play(sse("responses-tool-stream.sse"))
    with client.responses.stream(model="gpt-5", input="x", tools=TOOLS_R) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    expect(final.id == "resp_ts0000000000000001" and final.status == "completed", final)
    expect([o.type for o in final.output] == ["reasoning", "function_call"], final.output)
    play(sse("responses-text-stream.sse"))
    with client.responses.stream(model="gpt-5", input="x") as stream:
        texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    expect("".join(texts) == "The command printed hi — done.", texts)
    expect(final.output_text == "The command printed hi — done.", final.output_text)
    expect(final.output[0].summary[0].text == "**Checking** the output", final.output[0])


@check
def responses_non_streaming_body_parses_into_a_response(client):
    play(js("responses-text.json"))
    resp = client.responses.create(model="gpt-5", input="x")
    expect(isinstance(resp, Response), type(resp))
    expect(isinstance(resp.output[1], ResponseOutputMessage), resp.output)
    expect(resp.output_text == "The command printed hi — done.", resp.output_text)
    expect(resp.usage.output_tokens_details.reasoning_tokens == 16, resp.usage)


@check
def responses_failed_stream_yields_a_failed_event_with_its_code(client):
    play(sse("responses-failed-stream.sse"))
    events = list(client.responses.create(model="gpt-5", input="x", stream=True))
    expect(isinstance(events[-1], ResponseFailedEvent), type(events[-1]))
    expect(events[-1].response.error.code == "server_error", events[-1].response.error)


@check
def chat_tool_stream_chunks_and_helper_give_both_calls(client):
    play(sse("chat-tool-stream.sse"))
    chunks = list(
        client.chat.completions.create(
            model="gpt-5", messages=[{"role": "user", "content": "x"}], tools=TOOLS_C,
            stream=True, stream_options={"include_usage": True},
        )
    )
    expect(all(isinstance(c, ChatCompletionChunk) for c in chunks), "chunk classes")
    expect(chunks[-1].usage.total_tokens == 150 and chunks[-1].choices == [], chunks[-1])
    play(sse("chat-tool-stream.sse"))
    with client.chat.completions.stream(
        model="gpt-5", messages=[{"role": "user", "content": "x"}], tools=TOOLS_C,
        stream_options={"include_usage": True},
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    choice = final.choices[0]
    expect(choice.finish_reason == "tool_calls", choice.finish_reason)
    calls = [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls]
    expect(
        calls == [
            ("call_ts000000000000000a", "run_shell", '{"command":"echo a"}'),
            ("call_ts000000000000000b", "run_shell", '{"command":"echo b"}'),
        ],
        calls,
    )


@check
def chat_text_stream_without_usage_ends_with_stop(client):
    play(sse("chat-text-stream.sse"))
    with client.chat.completions.stream(
        model="gpt-5", messages=[{"role": "user", "content": "x"}]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    expect(final.choices[0].message.content == "The command printed hi — done.", final)
    expect(final.choices[0].finish_reason == "stop", final.choices[0])
    expect(final.usage is None, final.usage)


@check
def chat_non_streaming_body_parses_into_a_completion(client):
    play(js("chat-tool.json"))
    comp = client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
    expect(isinstance(comp, ChatCompletion), type(comp))
    msg = comp.choices[0].message
    expect(msg.content is None and len(msg.tool_calls) == 2, msg)
    expect(comp.usage.prompt_tokens_details.cached_tokens == 64, comp.usage)


@check
def model_listing_parses_into_models(client):
    play(js("models.json"))
    ids = [m.id for m in client.models.list()]
    expect(ids == ["gpt-5", "gpt-5-mini"], ids)
    expect(Handler.seen[0][0] == "/v1/models", Handler.seen[0][0])


ERROR_CLASSES = {
    "bad_request": openai.BadRequestError,
    "unauthorized": openai.AuthenticationError,
    "model_not_found": openai.NotFoundError,
    "rate_limited": openai.RateLimitError,
    "quota": openai.RateLimitError,
    "server_error": openai.InternalServerError,
    "overloaded": openai.InternalServerError,
}


def error_answer(entry):
    return (entry["status"], entry["headers"], entry["body"].encode(), "application/json")


@check
def every_error_maps_to_its_sdk_exception_with_code_and_param(client):
    entries = json.loads(golden("errors.json"))
    expect(sorted(e["name"] for e in entries) == sorted(ERROR_CLASSES), "error list")
    no_retry = client.with_options(max_retries=0)
    for entry in entries:
        play(error_answer(entry))
        try:
            no_retry.responses.create(model="gpt-5", input="x")
        except openai.APIStatusError as e:
            want = ERROR_CLASSES[entry["name"]]
            expect(type(e) is want, f"{entry['name']}: {type(e).__name__}")
            expect(e.status_code == entry["status"], e.status_code)
            body = json.loads(entry["body"])["error"]
            expect(e.code == body["code"] and e.param == body["param"], (e.code, e.param))
            expect(e.type == body["type"], e.type)
        else:
            raise AssertionError(f"{entry['name']}: no exception")


@check
def sdk_retries_429_and_503_after_our_retry_headers(client):
    entries = {e["name"]: e for e in json.loads(golden("errors.json"))}
    for name in ["rate_limited", "overloaded"]:
        play(error_answer(entries[name]), sse("chat-text-stream.sse"))
        t0 = time.monotonic()
        chunks = list(
            client.with_options(max_retries=1).chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "x"}], stream=True
            )
        )
        waited = time.monotonic() - t0
        wait_ms = int(entries[name]["headers"]["retry-after-ms"])
        expect(len(Handler.seen) == 2, f"{name}: {len(Handler.seen)} requests")
        expect(Handler.seen[1][1].get("x-stainless-retry-count") == "1", Handler.seen[1][1])
        expect(waited >= wait_ms / 1000, f"{name}: retried after {waited:.3f}s < {wait_ms} ms")
        expect(chunks[-1].choices[0].finish_reason == "stop", chunks[-1])


@check
def agents_runner_runs_our_tool_call_and_echoes_reasoning_and_output(client):
    try:
        import asyncio

        from agents import Agent, Runner, function_tool, set_default_openai_api
        from agents import set_default_openai_client, set_tracing_disabled
    except ImportError:
        print("skip  openai-agents not installed")
        return
    set_tracing_disabled(True)
    set_default_openai_client(
        openai.AsyncOpenAI(base_url=client.base_url, api_key="dummy", max_retries=0),
        use_for_tracing=False,
    )
    set_default_openai_api("responses")
    ran = []

    @function_tool
    def exec_command(cmd: str) -> str:
        """Run a command."""
        ran.append(cmd)
        return "hi"

    play(js("responses-tool.json"), js("responses-text.json"))
    agent = Agent(name="t", instructions="test", tools=[exec_command])
    result = asyncio.run(Runner.run(agent, "run it"))
    expect(ran == ["echo hi"], ran)
    expect(result.final_output == "The command printed hi — done.", result.final_output)
    follow_up = Handler.seen[1][2]["input"]
    kinds = [(i.get("type"), i.get("id") or i.get("call_id")) for i in follow_up]
    expect(
        kinds == [
            (None, None),
            ("reasoning", "rs_ts0000000000000001"),
            ("function_call", "fc_ts0000000000000001"),
            ("function_call_output", "call_ts0000000000000001"),
        ],
        kinds,
    )
    expect(follow_up[2]["call_id"] == "call_ts0000000000000001", follow_up[2])


def main():
    server = serve()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    client = openai.OpenAI(base_url=base, api_key="dummy", max_retries=0)
    print(f"openai {openai.__version__}, golden files in {GOLDEN}")
    failed = 0
    for fn in CHECKS:
        try:
            fn(client)
            print(f"ok    {fn.__name__}")
        except Exception as e:  # report every check, not just the first failure
            failed += 1
            print(f"FAIL  {fn.__name__}: {type(e).__name__}: {e}")
    server.shutdown()
    print(f"{len(CHECKS) - failed}/{len(CHECKS)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
