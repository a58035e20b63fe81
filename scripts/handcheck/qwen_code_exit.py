#!/usr/bin/env python3
# Hand check (no turnsim) for qwen-code's slow exit: how long `qwen` (headless) stays up
# after the last answer of a finished turn, and what it does meanwhile. A stdlib fake
# Chat Completions API asks for one 1 s shell command, then ends the turn; every request
# is answered (one with tools as the turn; one without, a side request, with a short
# text), and each is logged with its arrival time. From the final answer on, the agent
# process (`node … cli.js`, the launcher's child) is sampled every 0.5 s: its CPU time
# (user + system ticks, so busy and idle waiting can be told apart), its threads, its
# open sockets, the child processes it starts, and whether it is still there; the
# launcher's exit is timed too.
# Usage: handcheck/qwen_code_exit.py [RUNS] [STRACE_OUT]  (node >= 22 and qwen on PATH;
# default 3 runs); with STRACE_OUT, strace follows the agent from the final answer on and
# writes its system calls (all threads, timestamped) to STRACE_OUT.N for run N.
import json, os, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
STRACE = sys.argv[2] if len(sys.argv) > 2 else None


def one_run(k):
    t0 = time.time()
    ms = lambda: int((time.time() - t0) * 1000)
    log = []
    root = tempfile.mkdtemp(prefix="qwen-exit-")
    state = {"turn": 0, "final_at": None}

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            tools = bool(body.get("tools"))
            if tools:
                state["turn"] += 1
            n = state["turn"]
            log.append("+%6d ms request (%s, %d messages)" % (
                ms(), "with tools" if tools else "no tools: a side request", len(body["messages"])))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()

            def chunk(delta, finish=None):
                c = {"id": "c%d" % n, "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(("data: %s\n\n" % json.dumps(c)).encode())

            if tools and n == 1:
                chunk({"role": "assistant", "content": "step 1"})
                args = json.dumps({"command": "sh %s/work.sh" % root})
                chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                       "function": {"name": "run_shell_command", "arguments": args}}]})
                chunk({}, "tool_calls")
            else:
                chunk({"role": "assistant", "content": "Done." if tools else "ok"})
                chunk({}, "stop")
                if tools:
                    state["final_at"] = ms()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    os.makedirs(root + "/home/.qwen")
    os.makedirs(root + "/work")
    open(root + "/work.sh", "w").write("sleep 1\necho done\n")
    open(root + "/home/.qwen/settings.json", "w").write(
        '{"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true}}')
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_"))}
    env["HOME"] = root + "/home"
    p = subprocess.Popen(["qwen", "--auth-type", "openai", "--openai-api-key", "dummy", "--openai-base-url",
                          "http://127.0.0.1:%d/v1" % srv.server_address[1], "--model", "qwen3-coder-plus",
                          "--yolo", "--output-format", "stream-json", "Run the checks"],
                         cwd=root + "/work", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)

    def agent():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if b"cli.js" in open("/proc/%s/cmdline" % pid, "rb").read() and \
                   ("HOME=" + root + "/home").encode() in open("/proc/%s/environ" % pid, "rb").read():
                    return int(pid)
            except OSError:
                pass
        return None

    def sample(pid):
        try:
            f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
            ticks = int(f[11]) + int(f[12])
            threads = int(f[17])
            socks = sum(1 for fd in os.listdir("/proc/%d/fd" % pid)
                        if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:"))
            return ticks, threads, socks
        except (OSError, IndexError):
            return None

    def children(pid):
        out = []
        for c in filter(str.isdigit, os.listdir("/proc")):
            try:
                if open("/proc/%s/stat" % c).read().rsplit(")", 1)[1].split()[1] == str(pid):
                    out.append(open("/proc/%s/cmdline" % c, "rb").read().replace(b"\0", b" ").decode()[:80])
            except (OSError, IndexError):
                pass
        return out

    pid = None
    while state["final_at"] is None and ms() < 300000 and p.poll() is None:
        pid = pid or agent()
        time.sleep(0.1)
    log.append("+%6d ms the final answer was sent; agent pid %s" % (state["final_at"] or -1, pid))
    if STRACE and pid:
        subprocess.Popen(["strace", "-f", "-tt", "-o", "%s.%d" % (STRACE, k), "-p", str(pid)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = last = None
    launcher_exit = None
    started = set()
    while ms() < 300000:
        if launcher_exit is None and p.poll() is not None:
            launcher_exit = ms()
        s = sample(pid) if pid else None
        if s is None:
            break
        started.update(children(pid))
        first = first or (ms(), s)
        last = (ms(), s)
        time.sleep(0.5)
    gone = ms()
    if launcher_exit is None:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
        launcher_exit = ms()
    if pid and sample(pid):
        os.kill(pid, 9)
    srv.shutdown()
    if first and last:
        cpu = (last[1][0] - first[1][0]) * 10
        log.append("agent from the final answer to its exit: %d ms wall, %d ms CPU, threads %d, open sockets %d..%d"
                   % (gone - state["final_at"], cpu, last[1][1], first[1][2], last[1][2]))
    log.append("child processes of the agent seen meanwhile: %s" % (sorted(started) or "none"))
    log.append("launcher exit: +%s ms (%s ms after the final answer)" % (
        launcher_exit, None if launcher_exit is None else launcher_exit - state["final_at"]))
    print("run %d\n  " % k + "\n  ".join(log), flush=True)


for k in range(1, RUNS + 1):
    one_run(k)
