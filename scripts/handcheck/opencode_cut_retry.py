#!/usr/bin/env python3
# Hand check (no turnsim): what opencode keeps of a streamed reply that was cut.
# A stdlib fake Anthropic Messages API on loopback: the first request with tools
# gets a whole reply (a text "Step one." and a bash call); the second (with its
# result) gets a stream whose text block "PARTIAL ATTEMPT." arrives whole, then half a
# tool_use start, then the connection closes (no message_stop); every later request
# that answers the first call and not the second (a retry) gets a whole reply "Step
# two." with a second bash call; a request answering that call gets "All done." A
# request without tools (a title) gets a short text. The body ends at the closed
# connection, so the cut stream simply ends early; `--like-serve` sends every body
# chunked with a `ping` after the first block's start, as `turnsim serve` does, so
# the cut body lacks its last chunk (a broken body, not an early end).
# opencode runs headless (`opencode run --pure --format json`), HOME a fresh temp
# dir, offline. The script prints the assistant messages of every request, says
# whether the retry carried the cut text as its last message (a prefill), and exits 1
# when a later request holds the cut attempt's text in the step's message, joined to
# the retry's reply (a reply the model never completed kept in the history), 0 when
# it does not.
# `--same-text`: the retry's reply says the cut attempt's text again (drive's replies
# do), and the cut text is found kept when the step's message says it twice.
# Usage: handcheck/opencode_cut_retry.py [--like-serve] [--same-text]   (opencode on PATH; `npm install opencode-ai`)
import json, os, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []
lock = threading.Lock()
LIKE_SERVE = "--like-serve" in sys.argv[1:]
# The retry's reply opens with the cut attempt's text, as drive's scripted replies do
# (the cut step and the next one both say "Running check 2.").
SAME_TEXT = "--same-text" in sys.argv[1:]
CUT_TEXT = "PARTIAL ATTEMPT."


def sse(blocks, stop):
    ev = [("message_start", {"type": "message_start", "message": {
        "id": "msg_hc", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "tool_use", "id": b["id"], "name": "bash", "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        if i == 0 and LIKE_SERVE:
            ev.insert(2, ("ping", {"type": "ping"}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in ev]


def call(n):
    return {"type": "tool_use", "id": "toolu_hc_%d" % n,
            "input": {"command": "echo ran %d" % n, "description": "check %d" % n}}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        with lock:
            requests.append((time.time(), body))
        answered = {b.get("tool_use_id") for m in body.get("messages", []) if isinstance(m.get("content"), list)
                    for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
        cut = False
        if not body.get("tools"):
            events = sse([{"type": "text", "text": "A title"}], "end_turn")
        elif "toolu_hc_2" in answered:
            events = sse([{"type": "text", "text": "All done."}], "end_turn")
        elif "toolu_hc_1" in answered:
            with lock:
                first = sum(1 for _, b in requests if b.get("tools") and '"tool_use_id": "toolu_hc_1"' in json.dumps(b.get("messages", []))) == 1
            if first:
                # The text block whole, then half of the call's start: cut.
                events = sse([{"type": "text", "text": CUT_TEXT}, call(9)], "tool_use")[:5 if LIKE_SERVE else 4]
                events.append('event: content_block_start\ndata: {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_u')
                cut = True
            else:
                events = sse([{"type": "text", "text": CUT_TEXT if SAME_TEXT else "Step two."}, call(2)], "tool_use")
        else:
            events = sse([{"type": "text", "text": "Step one."}, call(1)], "tool_use")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if LIKE_SERVE:
            # A chunked body: cut, it lacks its last chunk, so the client sees a
            # broken body, not an end of stream.
            self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        for e in events:
            data = e.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if LIKE_SERVE else data)
            self.wfile.flush()
        if LIKE_SERVE and not cut:
            self.wfile.write(b"0\r\n\r\n")
        if cut and not LIKE_SERVE:
            time.sleep(0.2)
        self.close_connection = True


def texts(m):
    c = m.get("content")
    if isinstance(c, str):
        return [("text", c)]
    return [(b.get("type"), b.get("text") or b.get("id") or b.get("tool_use_id")) for b in c if isinstance(b, dict)]


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="opencode-home-")
    proj = tempfile.mkdtemp(prefix="opencode-proj-")
    base = "http://127.0.0.1:%d/v1" % srv.server_address[1]
    config = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4-5",
              "provider": {"anthropic": {"options": {"baseURL": base, "apiKey": "dummy"}}}}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENCODE", "XDG_"))}
    env.update(HOME=home, ANTHROPIC_API_KEY="dummy", OPENCODE_CONFIG_CONTENT=json.dumps(config),
               OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1",
               OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
               OPENCODE_DISABLE_CLAUDE_CODE="1")
    p = subprocess.run(["opencode", "run", "--pure", "--format", "json", "Run the checks with the bash tool."],
                       cwd=proj, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    print("opencode exited with %s" % p.returncode)
    with open(os.path.join(proj, "requests.json"), "w") as f:
        json.dump([b for _, b in requests], f, indent=1)
    print("requests as received: %s" % os.path.join(proj, "requests.json"))
    kept, prefilled = False, False
    for i, (_, b) in enumerate(requests):
        if not b.get("tools"):
            continue
        msgs = b.get("messages", [])
        print("request %d: %d messages" % (i + 1, len(msgs)))
        for j, m in enumerate(msgs):
            if m.get("role") == "assistant":
                print("  message %d (assistant): %s" % (j, texts(m)))
                said = [t for _, t in texts(m)].count(CUT_TEXT)
                if said > (1 if SAME_TEXT and j < len(msgs) - 1 else 0):
                    if j == len(msgs) - 1:
                        prefilled = True
                    else:
                        kept = True
    # Sent as the request's last message, the cut text is a prefill the reply
    # continues; kept in a message before later ones, it is part of what the model said.
    print("the retry request %s the cut text as its last message (a prefill)" % ("carried" if prefilled else "did not carry"))
    print("THE CUT ATTEMPT'S TEXT IS IN THE HISTORY, JOINED TO THE RETRY'S REPLY" if kept else "the cut attempt's text is not in the history")
    return 1 if kept else 0


if __name__ == "__main__":
    sys.exit(main())
