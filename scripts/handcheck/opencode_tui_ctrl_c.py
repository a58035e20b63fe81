#!/usr/bin/env python3
# Hand check (no turnsim): what opencode's terminal UI tells the model about a command
# it was running when the user pressed Ctrl+C (which leaves the UI). A stdlib fake
# Anthropic Messages API on loopback answers the first request with tools with a
# bash call that sleeps 10 s (writing "start" and, at its end, "effect" to a marker
# file), every later one with "Done." (end_turn); a request without tools (a title)
# gets a short text. The UI runs in a pty of its own (HOME a fresh temp dir,
# offline): the prompt is typed, Ctrl+C is pressed 2 s after the command started,
# then `opencode --continue` is started in a new pty and a second prompt typed. The
# script prints whether the command wrote its effect, and the tool_result the
# resumed request carries for the call. Exit 1 when that result is empty and not an
# error (a killed command shown to the model as one that succeeded without output),
# 0 otherwise. Usage: handcheck/opencode_tui_ctrl_c.py   (opencode on PATH)
import fcntl, json, os, re, select, signal, struct, subprocess, sys, tempfile, termios
import threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []
lock = threading.Lock()
MARK = None


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
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in ev]


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
            first = sum(1 for _, b in requests if b.get("tools")) == 1
        if not body.get("tools"):
            events = sse([{"type": "text", "text": "A title"}], "end_turn")
        elif first:
            cmd = "echo start >> '%s'; sleep 10; echo effect >> '%s'" % (MARK, MARK)
            events = sse([{"type": "text", "text": "Running the check."},
                          {"type": "tool_use", "id": "toolu_hc_1", "input": {"command": cmd, "description": "check"}}],
                         "tool_use")
        else:
            events = sse([{"type": "text", "text": "Done."}], "end_turn")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for e in events:
            self.wfile.write(e.encode())
            self.wfile.flush()
        self.close_connection = True


def visible(raw):
    text = re.sub(r"\x1b\[[0-9;?<>=:]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\|\x1b.", "", raw)
    return re.sub(r"\s+", "", text)


def start_ui(args, cwd, env):
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    p = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                         start_new_session=True)
    os.close(slave)
    return p, master


def pump(p, master, screen, until, cond):
    while time.time() < until and p.poll() is None:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                screen.append(os.read(master, 65536).decode("utf-8", "replace"))
            except OSError:
                return cond()
        if cond():
            return True
    return cond()


def type_prompt(p, master, screen, text):
    if not pump(p, master, screen, time.time() + 180, lambda: "ctrl+pcommands" in visible("".join(screen))):
        print("the UI never drew its footer")
        return False
    os.write(master, text.encode())
    pump(p, master, screen, time.time() + 1, lambda: False)
    n = len(requests)
    os.write(master, b"\r")
    for _ in range(3):
        if pump(p, master, screen, time.time() + 10, lambda: len(requests) > n):
            return True
        os.write(master, b"\r")
    return len(requests) > n


def main():
    global MARK
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="opencode-home-")
    proj = tempfile.mkdtemp(prefix="opencode-proj-")
    MARK = os.path.join(proj, "marker")
    base = "http://127.0.0.1:%d/v1" % srv.server_address[1]
    config = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4-5",
              "provider": {"anthropic": {"options": {"baseURL": base, "apiKey": "dummy"}}}}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENCODE", "XDG_"))}
    env.update(HOME=home, TERM="xterm-256color", ANTHROPIC_API_KEY="dummy",
               OPENCODE_CONFIG_CONTENT=json.dumps(config), OPENCODE_DISABLE_MODELS_FETCH="1",
               OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1",
               OPENCODE_DISABLE_DEFAULT_PLUGINS="1", OPENCODE_DISABLE_CLAUDE_CODE="1")
    screen = []
    p, master = start_ui(["opencode", "--pure"], proj, env)
    if not type_prompt(p, master, screen, "Run the check with the bash tool."):
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    if not pump(p, master, screen, time.time() + 120, lambda: os.path.exists(MARK)):
        print("the command never started")
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    pump(p, master, screen, time.time() + 2, lambda: False)
    os.write(master, b"\x03")
    t = time.time()
    pump(p, master, screen, t + 30, lambda: p.poll() is not None)
    print("Ctrl+C 2 s into the command; the UI %s %.1f s later" % (
        "exited with %s" % p.returncode if p.poll() is not None else "was still up", time.time() - t))
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    time.sleep(max(0, t + 10 - time.time()))
    marks = open(MARK).read().split()
    print("marker file: %s (%s)" % (marks, "the command ran to its end" if "effect" in marks else "the command was killed"))
    n_first = len(requests)
    screen2 = []
    p2, master2 = start_ui(["opencode", "--pure", "--continue"], proj, env)
    ok = type_prompt(p2, master2, screen2, "Go on.")
    pump(p2, master2, screen2, time.time() + 20, lambda: False)
    try:
        os.killpg(p2.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with open(os.path.join(proj, "requests.json"), "w") as f:
        json.dump([b for _, b in requests], f, indent=1)
    print("requests as received: %s" % os.path.join(proj, "requests.json"))
    resumed = [b for _, b in requests[n_first:] if b.get("tools")]
    if not ok or not resumed:
        print("the resumed UI sent no request with tools")
        return 2
    result = None
    for m in resumed[0].get("messages", []):
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == "toolu_hc_1":
                result = b
    print("the resumed request's result for toolu_hc_1: %s" % json.dumps(result))
    empty = result is not None and not result.get("is_error") and result.get("content") in ("", [], None)
    print("AN EMPTY, NON-ERROR RESULT FOR THE KILLED COMMAND" if empty else "not an empty success")
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
