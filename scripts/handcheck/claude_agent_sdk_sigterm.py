# Hand check (no turnsim): a stdlib fake Messages API that always asks for one more
# `sleep 3` Bash call (5 rounds), the Agent SDK program, SIGTERM to the program 2 s in;
# prints every request's arrival and whether Claude Code is alive, for 40 s.
# Usage (the SDK's interpreter): python3 scripts/handcheck/claude_agent_sdk_sigterm.py \
#   scripts/claude_agent_sdk_loop.py [--sighup]
# With --sighup, SIGHUP goes to the program's whole process group instead (a closed
# terminal, a dropped ssh session; what `turnsim drive` sends), which holds Claude Code
# too; the `sleep 3` commands still running are printed with Claude Code's.
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
T0 = time.time(); log = []
def ms(): return int((time.time() - T0) * 1000)
class H(BaseHTTPRequestHandler):
    n = 0
    def log_message(self, *a): pass
    def do_HEAD(self): self.send_response(200); self.end_headers()
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        H.n += 1; n = H.n
        log.append("+%6d ms request %d (%d messages)" % (ms(), n, len(body["messages"])))
        blocks = [{"type": "text", "text": "step %d" % n}]
        if n <= 5:
            blocks.append({"type": "tool_use", "id": "toolu_%02d" % n, "name": "Bash",
                           "input": {"command": "sleep 3; echo round %d >> %s/effects" % (n, root)}})
        msg = {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": body["model"],
               "content": [], "stop_reason": "tool_use" if n <= 5 else "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
        self.send_response(200); self.send_header("content-type", "text/event-stream"); self.end_headers()
        def ev(t, d): self.wfile.write(("event: %s\ndata: %s\n\n" % (t, json.dumps(dict(d, type=t)))).encode())
        ev("message_start", {"message": msg})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                ev("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                ev("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                ev("content_block_start", {"index": i, "content_block": dict(b, input={})})
                ev("content_block_delta", {"index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
            ev("content_block_stop", {"index": i})
        ev("message_delta", {"delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": 1}})
        ev("message_stop", {})
root = tempfile.mkdtemp(prefix="sdk-sigterm-")
os.makedirs(root + "/home"); os.makedirs(root + "/work")
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
env.update(HOME=root + "/home", IS_SANDBOX="1", DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
p = subprocess.Popen([sys.executable, sys.argv[1], "http://127.0.0.1:%d" % srv.server_address[1], "--prompt", "go"],
                     cwd=root + "/work", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
while not os.path.exists(root + "/home/.claude") or H.n < 1: time.sleep(0.05)
time.sleep(2)
if sys.argv[2:] == ["--sighup"]:
    os.killpg(p.pid, signal.SIGHUP); log.append("+%6d ms SIGHUP to the SDK program's process group (%d)" % (ms(), p.pid))
else:
    p.send_signal(signal.SIGTERM); log.append("+%6d ms SIGTERM to the SDK program (pid %d)" % (ms(), p.pid))
p.wait(); log.append("+%6d ms the SDK program exited: %s" % (ms(), p.returncode))
def claudes():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"_bundled/claude" in open("/proc/%s/cmdline" % pid, "rb").read() and \
               ("HOME=" + root + "/home").encode() in open("/proc/%s/environ" % pid, "rb").read():
                out.append(int(pid))
        except OSError: pass
    return out
def sleeps():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open("/proc/%s/cmdline" % pid, "rb").read() == b"sleep\x003\x00" and \
               ("HOME=" + root + "/home").encode() in open("/proc/%s/environ" % pid, "rb").read():
                out.append(int(pid))
        except OSError: pass
    return out
alive = claudes(); log.append("+%6d ms Claude Code alive after the program's exit: %s; `sleep 3` running: %s" % (ms(), alive, sleeps()))
had = set(sleeps())
while claudes() and ms() < 40000:
    time.sleep(0.02)
    if had and not set(sleeps()) & had:
        log.append("+%6d ms the `sleep 3` that ran at the signal is gone" % ms()); had = set()
log.append("+%6d ms Claude Code %s; `sleep 3` running: %s" % (ms(), "still alive (killed now)" if claudes() else "gone", sleeps()))
for c in claudes(): os.kill(c, signal.SIGKILL)
print("\n".join(log))
print("effects:", open(root + "/effects").read().split("\n") if os.path.exists(root + "/effects") else "none")
