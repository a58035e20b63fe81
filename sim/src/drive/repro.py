#!/usr/bin/env python3
# Reproduces one `turnsim drive` finding without turnsim: a stdlib server replays the
# scripted model's replies, the client runs as it did, the signal is sent at the
# same point, and the finding is checked again. Usage: python3 repro.py
# Exit 1: reproduced; 0: not this time (the client is not deterministic).
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CFG = json.loads(r'''@CONFIG@''')
TOOL = r'''@TOOL@'''
root = tempfile.mkdtemp(prefix="turnsim-repro-")
for d in ("home", "work"):
    os.makedirs(os.path.join(root, d))
script, ledger = os.path.join(root, "tool.sh"), os.path.join(root, "ledger")
open(script, "w").write(TOOL)
def boot_ms():
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1000)
T0 = boot_ms()
MARK = "repro-%d" % os.getpid()

def clean_up():
    # Everything the client left behind carries the marker, whatever its group or session.
    killed = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            if ("TURNSIM_DRIVE_RUN=" + MARK).encode() in env:
                cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace")
                os.kill(int(pid), signal.SIGKILL)
                killed.append("%s %s" % (pid, cmd.strip()))
        except OSError:
            pass
    for k in killed:
        print("clean-up killed pid " + k)
lock = threading.Lock()
state = {"steps": list(CFG["first_steps"]), "ids": list(CFG["tool_ids"]), "log": []}

def reply_blocks(step):
    blocks = [{"type": "text", "text": step["text"]}]
    if step.get("tool"):
        tid = state["ids"].pop(0) if state["ids"] else "toolu_repro_%d" % len(state["log"])
        cmd = "sh '%s' %s '%s' %d" % (script, tid, ledger, CFG["tool_ms"])
        blocks.append({"type": "tool_use", "id": tid, "name": CFG["shell_tool"], "input": {"command": cmd}})
    return blocks

def sse(blocks, stop):
    ev = [("message_start", {"type": "message_start", "message": {"id": "msg_repro", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in ev]

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def send(self, status, body, extra=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.send(404, {"type": "error", "error": {"type": "not_found_error", "message": "none"}})
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        path = self.path.split("?")[0]
        with lock:
            state["log"].append({"t": boot_ms() - T0, "path": path, "body": body})
            tools = path == "/v1/messages" and bool(body.get("tools"))
            step = state["steps"].pop(0) if tools and state["steps"] else None
        if path.endswith("/count_tokens"):
            return self.send(200, {"input_tokens": 10})
        if path != "/v1/messages":
            return self.do_GET()
        if step is None:
            step = {"kind": "reply", "text": "ok", "tool": False}
        if step["kind"] == "status":
            extra = [("retry-after", "1")] if step["status"] == 429 else []
            return self.send(step["status"], {"type": "error", "error": {"type": "overloaded_error" if step["status"] == 529 else "rate_limit_error", "message": "repro"}}, extra)
        blocks = reply_blocks(step)
        stop = "tool_use" if step.get("tool") else "end_turn"
        if not body.get("stream"):
            return self.send(200, {"id": "msg_repro", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        events = sse(blocks, stop)
        if step["kind"] == "cut":
            events = events[:step["after_events"]]
        for e in events:
            self.wfile.write(e.encode())
            self.wfile.flush()
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
base = "http://127.0.0.1:%d" % srv.server_address[1]

def fill(s, prompt):
    return (s.replace("{base_url_v1}", base + "/v1").replace("{base_url}", base)
            .replace("{prompt}", prompt).replace("{home}", os.path.join(root, "home"))
            .replace("{work}", os.path.join(root, "work")).replace("{repo}", CFG["repo"]))

def run(argv, prompt, sig, resume=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "OPENCODE", "XDG_"))}
    home = os.path.join(root, "home")
    env.update(HOME=home, XDG_CONFIG_HOME=home + "/.config", XDG_DATA_HOME=home + "/.local/share",
               XDG_CACHE_HOME=home + "/.cache", XDG_STATE_HOME=home + "/.local/state")
    env["TURNSIM_DRIVE_RUN"] = MARK
    for k, v in CFG["env"]:
        env[k] = fill(v, prompt)
    args = [("--resume" if a == "{resume}" else fill(a, prompt)) for a in argv if resume or a != "{resume}"]
    p = subprocess.Popen(args, cwd=os.path.join(root, "work"), env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    sent, due = None, None
    while p.poll() is None:
        if sig and sent is None:
            starts = [l for l in read_ledger() if l[0] == "start"]
            if due is None and len(starts) > sig["at_tool"]:
                due = time.time() + sig["delay_ms"] / 1000
            if due is not None and time.time() >= due:
                num = getattr(signal, sig["name"])
                (os.killpg if sig["name"] in ("SIGINT", "SIGHUP") else os.kill)(p.pid, num)
                sent = boot_ms() - T0
                print("+%6d ms %s sent" % (sent, sig["name"]))
        time.sleep(0.02)
    end = boot_ms() - T0
    print("+%6d ms client exited with %s" % (end, p.returncode))
    return sent, end

def read_ledger():
    out = []
    for line in open(ledger).read().splitlines() if os.path.exists(ledger) else []:
        w = line.split()
        if w and w[0] in ("start", "effect", "finish") and len(w) >= 3:
            out.append((w[0], w[1], int(w[2][2:]) - T0, " ".join(w[3:])))
    return out

sent, end = run(CFG["command"], CFG["prompt1"], CFG["signal"])
n_first = len(state["log"])
time.sleep((CFG["tool_ms"] + 2000) / 1000)
clean_up()
for k, i, t, who in read_ledger():
    print("+%6d ms %s %s %s%s" % (t, k, i, who, "  (after the client exited)" if t > end else ""))
found = []
check = CFG["check"]
if check == "orphaned_tool":
    found = ["tool %s wrote its effect at +%d ms, %d ms after the client exited" % (i, t, t - end)
             for k, i, t, _ in read_ledger() if k == "effect" and t > end]
if check == "no_effect_after_cancel" and sent is not None:
    found = ["request to %s at +%d ms, after the signal" % (r["path"], r["t"]) for r in state["log"][:n_first] if r["t"] > sent]
    found += ["tool %s started at +%d ms, after the signal" % (i, t) for k, i, t, _ in read_ledger() if k == "start" and sent < t <= end]
if check in ("started_call_represented", "no_lost_observation"):
    with lock:
        state["steps"] = list(CFG["resume_steps"])
    run(CFG["resume"], CFG["prompt2"], None, True)
    req = next((r["body"] for r in state["log"][n_first:] if r["path"] == "/v1/messages" and r["body"].get("tools")), None)
    results = set()
    for m in (req or {}).get("messages", []):
        for b in m.get("content", []) if isinstance(m.get("content"), list) else []:
            if b.get("type") == "tool_result":
                results.add(b.get("tool_use_id"))
    done_before = {i for k, i, t, _ in read_ledger() if k == "finish" and sent is not None and t <= sent}
    cut = [i for k, i, t, _ in read_ledger() if k == "start" and t <= end and i not in done_before]
    want = cut if check == "started_call_represented" else sorted(done_before)
    found = ["the resumed request has no tool_result for %s" % i for i in want if i not in results]
    if req is None:
        found = ["the resumed client sent no tool-bearing request"]
if check not in ("orphaned_tool", "no_effect_after_cancel", "started_call_represented", "no_lost_observation"):
    print("this script re-runs the schedule; %s is judged by turnsim itself (see report.json)" % check)
clean_up()
for f in found:
    print("REPRODUCED %s: %s" % (check, f))
print("files: " + root)
sys.exit(1 if found else 0)
