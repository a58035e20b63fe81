#!/usr/bin/env python3
# Hand check (no turnsim): qwen-code's terminal UI and a stream cut right after a whole
# tool call. A stdlib fake Chat Completions API on loopback answers the first request
# with tools with chunks of text and one complete run_shell_command call (its
# arguments whole), then closes the connection with no finish_reason, no [DONE] and no
# end of the chunked body (a dropped connection). A later request that still ends on
# the prompt (a retry) gets another call and finish_reason "tool_calls"; a request
# with tool results gets "Done."; a request without tools (the UI's suggestion) gets a
# short text. Each call's command prints a token of its own (RAN-A for the cut
# stream's call, RAN-B for a retry's) and appends it to a marker file. The UI runs in a
# pty of its own (HOME a fresh temp dir, YOLO); once the server has been quiet 8 s the
# script types /quit. It prints which commands ran and, for each request with tool
# results, which call each result answers and whether an assistant message before it
# holds that call. Exit 1 when the cut stream's call ran (a client acting on a
# response that never finished), 0 when it did not.
# Usage: handcheck/qwen_code_tui_cut.py   (node >= 22 and qwen on PATH)
import fcntl, json, os, re, select, signal, struct, subprocess, sys, tempfile, termios
import threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []  # (time, body)
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        with lock:
            requests.append((time.time(), body))
            n_tools = sum(1 for _, b in requests if b.get("tools"))
        msgs = body.get("messages", [])
        if not body.get("tools"):
            return self.stream([{"content": "Run the check again."}], "stop")
        if msgs and msgs[-1].get("role") == "tool":
            return self.stream([{"content": "Done."}], "stop")
        token = "RAN-A" if n_tools == 1 else "RAN-B"
        cmd = "echo %s; echo %s >> '%s'" % (token, token, MARK)
        call = {"tool_calls": [{"index": 0, "id": "call_%s" % token, "type": "function",
                                "function": {"name": "run_shell_command",
                                             "arguments": json.dumps({"command": cmd})}}]}
        if token == "RAN-A":
            return self.stream([{"role": "assistant", "content": "Running the check."}, call], None)
        return self.stream([{"role": "assistant", "content": "Running the check."}, call], "tool_calls")

    def stream(self, deltas, finish):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def send(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        for d in deltas:
            c = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "qwen3-coder-plus",
                 "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
            send(("data: %s\n\n" % json.dumps(c)).encode())
        if finish is None:
            # No finish_reason, no [DONE], no zero-length chunk: the body never ends.
            time.sleep(0.3)
            self.close_connection = True
            self.connection.shutdown(2)
            return
        c = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "qwen3-coder-plus",
             "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
        send(("data: %s\n\n" % json.dumps(c)).encode())
        send(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")


def visible(raw):
    text = re.sub(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b.", "", raw)
    return re.sub(r"\s+", "", text)


def main():
    global MARK
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="qwen-home-")
    proj = tempfile.mkdtemp(prefix="qwen-proj-")
    MARK = os.path.join(proj, "marker")
    os.makedirs(os.path.join(home, ".qwen"))
    with open(os.path.join(home, ".qwen", "settings.json"), "w") as f:
        json.dump({"privacy": {"usageStatisticsEnabled": False},
                   "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}, f)
    env = dict(os.environ, HOME=home, TERM="xterm-256color", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    base = "http://127.0.0.1:%d/v1" % srv.server_address[1]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    p = subprocess.Popen(["qwen", "--auth-type", "openai", "--openai-api-key", "dummy",
                          "--openai-base-url", base, "--model", "qwen3-coder-plus", "--yolo"],
                         cwd=proj, env=env, stdin=slave, stdout=slave, stderr=slave,
                         start_new_session=True)
    os.close(slave)
    screen = []

    def pump(until, cond):
        while time.time() < until and p.poll() is None:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    screen.append(os.read(master, 65536).decode("utf-8", "replace"))
                except OSError:
                    return False
            if cond():
                return True
        return cond()

    if not pump(time.time() + 120, lambda: "Typeyourmessage" in visible("".join(screen))):
        print("the UI never showed its input box")
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    os.write(master, b"Run the check with the shell tool.")
    pump(time.time() + 1, lambda: False)
    os.write(master, b"\r")
    for _ in range(3):
        if pump(time.time() + 10, lambda: requests):
            break
        os.write(master, b"\r")
    t0 = time.time()

    def settled():
        with lock:
            last = requests[-1][0] if requests else t0
        return time.time() - last > 8

    pump(t0 + 150, settled)
    os.write(master, b"/quit")
    pump(time.time() + 1, lambda: False)
    os.write(master, b"\r")
    pump(time.time() + 60, lambda: p.poll() is not None)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with open(os.path.join(proj, "requests.json"), "w") as f:
        json.dump([{"t": t - t0, "body": b} for t, b in requests], f, indent=1)
    with open(os.path.join(proj, "screen.raw"), "w") as f:
        f.write("".join(screen))
    print("requests as received: %s; the screen: %s" % (os.path.join(proj, "requests.json"),
                                                       os.path.join(proj, "screen.raw")))
    ran = open(MARK).read().split() if os.path.exists(MARK) else []
    print("requests with tools: %d, without: %d; commands run (marker): %s" % (
        sum(1 for _, b in requests if b.get("tools")), sum(1 for _, b in requests if not b.get("tools")), ran))
    for i, (t, b) in enumerate(requests):
        msgs = b.get("messages", [])
        called = {c["id"] for m in msgs if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])}
        for m in msgs:
            if m.get("role") != "tool":
                continue
            out = json.dumps(m.get("content"))
            token = "RAN-A" if "RAN-A" in out else "RAN-B" if "RAN-B" in out else "?"
            print("request %d (+%.1f s, %s): a tool result for %s (output of %s): %s" % (
                i + 1, t - t0, "tools" if b.get("tools") else "no tools", m.get("tool_call_id"), token,
                "its call is in the history" if m.get("tool_call_id") in called else "ITS CALL IS NOT IN THE HISTORY"))
    cut_ran = "RAN-A" in ran
    print("THE CUT STREAM'S CALL RAN" if cut_ran else "the cut stream's call did not run")
    return 1 if cut_ran else 0


if __name__ == "__main__":
    sys.exit(main())
