#!/usr/bin/env python3
# Hand check (no turnsim) for headless cline 3.0.65 (`cline --json`), three cases:
#   sigterm (or sighup, the same with SIGHUP): a stdlib fake Chat Completions API asks for five `run_commands` calls in a
#     row, each a script that sleeps 3 s then appends `round N` to an effects file;
#     once the first call runs, SIGTERM goes to the `cline` process (the pid a user
#     sees: the node launcher); printed: each request's arrival, the launcher's exit,
#     every cline process of the run still alive, and the effects (90 s at most, then
#     everything of the run is killed).
#   cut: the second reply (a tool call, 8 events: role, text, call, 2 argument pieces,
#     finish_reason, usage, [DONE]) is cut inside an SSE event: the first CUT_AT events
#     whole (default 6: up to the finish_reason), then half of the next, then the
#     connection drops without the last chunk of its chunked body (a truncated body, as
#     when a provider's connection breaks); printed: the requests (a retry is a third),
#     cline's exit code and its error lines. CUT_REQ=1 cuts the first reply instead.
# Usage: handcheck/cline_headless.py sigterm|sighup|cut  (with cline and node on PATH).
# The HOME is fresh (a temporary directory) with the provider file cline reads its base
# URL from; CLINE_SESSION_BACKEND_MODE=local keeps the run in its own process (no hub).
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
if MODE not in ("sigterm", "sighup", "cut"):
    sys.exit("usage: cline_headless.py sigterm|sighup|cut")
SIG = {"sigterm": signal.SIGTERM, "sighup": signal.SIGHUP}.get(MODE)
CUT_AT = int(os.environ.get("CUT_AT", "6"))
# Which request is cut (2: the first one after a tool result; 1: the first of all).
CUT_REQ = int(os.environ.get("CUT_REQ", "2"))
T0 = time.time()
log = []
root = tempfile.mkdtemp(prefix="cline-%s-" % MODE)
ROUNDS = 2 if MODE == "cut" else 5


def ms():
    return int((time.time() - T0) * 1000)


def events(n, model):
    # The chunks of reply n: text, then a run_commands call (or the end of the turn).
    def chunk(choices, usage=None):
        c = {"id": "chatcmpl-%d" % n, "object": "chat.completion.chunk", "created": 0, "model": model,
             "choices": choices}
        if usage is not None:
            c["usage"] = usage
        return "data: %s\n\n" % json.dumps(c)
    out = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]),
           chunk([{"index": 0, "delta": {"content": "Running check %d." % n}, "finish_reason": None}])]
    if n <= ROUNDS:
        args = json.dumps({"commands": ["sh %s/work.sh %d" % (root, n)]})
        out.append(chunk([{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_%d" % n, "type": "function",
                                                              "function": {"name": "run_commands", "arguments": ""}}]},
                           "finish_reason": None}]))
        half = len(args) // 2
        for frag in (args[:half], args[half:]):
            out.append(chunk([{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": frag}}]},
                               "finish_reason": None}]))
        stop = "tool_calls"
    else:
        stop = "stop"
    out.append(chunk([{"index": 0, "delta": {}, "finish_reason": stop}]))
    out.append(chunk([], {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
    out.append("data: [DONE]\n\n")
    return out


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    n = 0
    replies = 0

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        H.n += 1
        n = H.n
        last = body["messages"][-1]
        log.append("+%6d ms request %d (%d messages; last: %s %.100s)" % (
            ms(), n, len(body["messages"]), last["role"], json.dumps(last.get("content"))))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        cut = MODE == "cut" and n == CUT_REQ
        # A reply after the cut one answers as the cut one would have (same round).
        H.replies += 0 if cut else 1
        evs = events(H.replies + (1 if cut else 0), body["model"])
        if cut:
            whole, part = evs[:CUT_AT], evs[CUT_AT]
            for e in whole:
                self.chunk(e)
            self.chunk(part[:len(part) // 2])
            self.wfile.flush()
            # No zero-length chunk: the body is truncated, not ended.
            self.connection.shutdown(2)
            log.append("+%6d ms request %d: cut after %d of %d events, inside event %d: %r" % (
                ms(), n, CUT_AT, len(evs), CUT_AT + 1, part[:len(part) // 2][-60:]))
            self.close_connection = True
            return
        for e in evs:
            self.chunk(e)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


home = root + "/home"
os.makedirs(home + "/.cline/data/settings")
os.makedirs(root + "/work")
open(root + "/work.sh", "w").write('echo "start $1" >> %s/starts\nsleep 3\necho "round $1" >> %s/effects\n' % (root, root))
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
open(home + "/.cline/data/settings/providers.json", "w").write(json.dumps({
    "version": 1, "lastUsedProvider": "openai-compatible",
    "providers": {"openai-compatible": {"settings": {
        "provider": "openai-compatible", "apiKey": "dummy", "model": "gpt-4o",
        "baseUrl": "http://127.0.0.1:%d/v1" % srv.server_address[1]},
        "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}}))
env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CLINE_", "XDG_"))}
env.update(HOME=home, CLINE_SESSION_BACKEND_MODE="local")
out = open(root + "/stdout", "wb")
p = subprocess.Popen(["cline", "--json", "-P", "openai-compatible", "-m", "gpt-4o", "Run the checks"],
                     cwd=root + "/work", env=env, stdin=subprocess.DEVNULL, stdout=out,
                     stderr=open(root + "/stderr", "wb"), start_new_session=True)


def ours():
    # Every process of this run: cline's environment carries this HOME.
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if ("HOME=" + home).encode() in open("/proc/%s/environ" % pid, "rb").read():
                cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()[:90]
                found.append((int(pid), cmd))
        except OSError:
            pass
    return found


if SIG is not None:
    while not os.path.exists(root + "/starts") and ms() < 120000:
        time.sleep(0.05)
    time.sleep(1.5)  # inside the first call's 3 s sleep
    log.append("+%6d ms processes: %s" % (ms(), ours()))
    p.send_signal(SIG)
    log.append("+%6d ms %s to pid %d (`cline`)" % (ms(), SIG.name, p.pid))
try:
    p.wait(timeout=90)
    log.append("+%6d ms cline (pid %d) exited: %s" % (ms(), p.pid, p.returncode))
except subprocess.TimeoutExpired:
    log.append("+%6d ms cline (pid %d) still running after 90 s" % (ms(), p.pid))
time.sleep(0.3)
left = ours()
log.append("+%6d ms alive after its exit: %s" % (ms(), left))
end = time.time() + 30
while ours() and time.time() < end:
    time.sleep(0.2)
for pid, _ in ours():
    os.kill(pid, signal.SIGKILL)
print("\n".join(log))
eff = root + "/effects"
print("effects:", open(eff).read().split("\n")[:-1] if os.path.exists(eff) else "none")
errs = [l for l in open(root + "/stdout").read().splitlines() if '"error"' in l]
print("stdout error lines:", *[l[:300] for l in errs[-3:]], sep="\n  ")
print("files:", root)
