#!/usr/bin/env python3
# Hand check (no turnsim): gemini-cli's terminal UI and a stream cut right after a whole
# function call. A stdlib fake Gemini API on loopback answers the first
# streamGenerateContent with one chunk (text and a complete run_shell_command call, no
# finishReason) and then closes the connection without ending the chunked body (what
# a dropped connection looks like). Every later request that still ends on the
# prompt (a retry) gets a whole answer: another call, then STOP. A request that
# carries function responses gets "Done.". Each call's command prints a token of its
# own (RAN-A for the cut stream's call, RAN-B for the retry's) and appends it to a
# marker file. The UI runs in a pty of its own (HOME a fresh temp dir, YOLO), the
# prompt is typed, and once the server has been quiet 6 s the script types /quit.
# It prints which commands ran and, for each request with function responses, which
# call each response answers and whether the model turn before it holds that call.
# Exit 1 when a response answers a call that is not in the history it is sent with
# (the cut stream's call was run although the retry replaced that model turn).
# Usage: handcheck/gemini_cli_tui_cut.py PATH_TO_gemini
import fcntl, json, os, re, select, signal, struct, subprocess, sys, tempfile, termios
import threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []  # (time, contents)
lock = threading.Lock()


def parts(contents):
    for c in contents:
        for p in c.get("parts", []):
            yield c.get("role"), p


def call(token, mark):
    cmd = "echo %s; echo %s >> '%s'" % (token, token, mark)
    return {"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.whole("application/json", json.dumps({"models": []}))

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if ":countTokens" in self.path:
            return self.whole("application/json", json.dumps({"totalTokens": 1}))
        contents = body.get("contents", [])
        has_tools = bool(body.get("tools"))
        with lock:
            requests.append((time.time(), contents, has_tools))
            n_tool_requests = sum(1 for r in requests if r[2])
        answered = any("functionResponse" in p for _, p in parts(contents))
        if not has_tools:  # the UI's own side request (next speaker, title, ...)
            return self.stream([{"text": "{}"}], finish=True)
        if answered:
            return self.stream([{"text": "Done."}], finish=True)
        if n_tool_requests == 1:
            return self.stream([{"text": "Running the check."}, call("RAN-A", MARK)], finish=False, cut=True)
        return self.stream([{"text": "Running the check."}, call("RAN-B", MARK)], finish=True)

    def stream(self, ps, finish, cut=False):
        chunk = {"candidates": [{"content": {"role": "model", "parts": ps}, "index": 0}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                 "modelVersion": "gemini-2.5-pro"}
        if finish:
            chunk["candidates"][0]["finishReason"] = "STOP"
        data = ("data: %s\r\n\r\n" % json.dumps(chunk)).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
        if cut:
            # No terminating zero-length chunk: the body never ends properly.
            time.sleep(0.3)
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(b"0\r\n\r\n")

    def whole(self, kind, text):
        data = text.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def visible(raw):
    text = re.sub(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b.", "", raw)
    return re.sub(r"\s+", "", text)


def main():
    global MARK
    gemini = sys.argv[1]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="gemini-home-")
    proj = tempfile.mkdtemp(prefix="gemini-proj-")
    MARK = os.path.join(proj, "marker")
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                   "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}}, f)
    env = dict(os.environ, HOME=home, GEMINI_API_KEY="dummy", TERM="xterm-256color",
               GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % srv.server_address[1])
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    p = subprocess.Popen([gemini, "--yolo", "-m", "gemini-2.5-pro"], cwd=proj, env=env,
                         stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
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

    if not pump(time.time() + 90, lambda: "Typeyourmessage" in visible("".join(screen))):
        print("the UI never showed its input box")
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    os.write(master, b"Run the check with the shell tool.")
    pump(time.time() + 1, lambda: False)
    os.write(master, b"\r")
    t0 = time.time()
    # Quiet: no request for 6 s after at least one answered call (or 120 s in all).
    def settled():
        with lock:
            last = requests[-1][0] if requests else t0
            answered = any(any("functionResponse" in q for _, q in parts(c)) for _, c, _ in requests)
        return answered and time.time() - last > 6
    pump(t0 + 120, settled)
    os.write(master, b"/quit")
    pump(time.time() + 1, lambda: False)
    os.write(master, b"\r")
    pump(time.time() + 15, lambda: p.poll() is not None)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with open(os.path.join(proj, "requests.json"), "w") as f:
        json.dump([{"t": t - t0, "tools": k, "contents": c} for t, c, k in requests], f, indent=1)
    with open(os.path.join(proj, "screen.raw"), "w") as f:
        f.write("".join(screen))
    print("requests as received: %s; the screen: %s" % (os.path.join(proj, "requests.json"),
                                                       os.path.join(proj, "screen.raw")))
    ran = open(MARK).read().split() if os.path.exists(MARK) else []
    print("model requests with tools: %d; commands run (marker): %s" %
          (sum(1 for r in requests if r[2]), ran))
    orphan_answer = False
    for i, (t, contents, has_tools) in enumerate(requests):
        responses = [q["functionResponse"] for _, q in parts(contents) if "functionResponse" in q]
        if not responses:
            continue
        # The model turn just before the last user turn holding the responses.
        model_turns = [c for c in contents if c.get("role") == "model"]
        before = model_turns[-1] if model_turns else {"parts": []}
        asked = [q["functionCall"]["args"].get("command", "") for q in before.get("parts", [])
                 if "functionCall" in q]
        for r in responses:
            out = json.dumps(r.get("response", {}))
            token = "RAN-A" if "RAN-A" in out else "RAN-B" if "RAN-B" in out else "?"
            in_history = any(token in a for a in asked)
            orphan_answer |= not in_history
            print("request %d (+%.1f s): a functionResponse (id %s) with the output of %s; "
                  "the model turn before it calls %s: %s" %
                  (i + 1, t - t0, r.get("id"), token,
                   [("RAN-A" if "RAN-A" in a else "RAN-B") for a in asked],
                   "in the history" if in_history else "NOT IN THE HISTORY"))
    print("A RESPONSE ANSWERS A CALL THAT IS NOT IN THE HISTORY" if orphan_answer
          else "every response answers a call of the turn before it")
    return 1 if orphan_answer else 0


if __name__ == "__main__":
    sys.exit(main())
