#!/usr/bin/env python3
# Hand check (no turnsim) for qwen-code: `kill PID` of `qwen` ends its launcher, not the
# agent. A stdlib fake Chat Completions API asks for five `sleep 3` shell calls in a row;
# `qwen` runs headless against it; SIGTERM goes to the `qwen` process (the pid a user
# sees) once the first call runs; then every request's arrival, the launcher's exit and
# how long its agent child lives are printed (90 s at most, then it is killed).
# Usage: handcheck/qwen_code_sigterm.py [INT|HUP]  (with node >= 22 and qwen on PATH); with
# INT, SIGINT goes to the whole process group instead, as a terminal's Ctrl+C does, and
# once the agent is gone `qwen --continue` resumes the session: what its first request
# says about the interrupted call is printed next to whether the command finished.
# With HUP, SIGHUP goes to the whole process group (a closed terminal, a dropped ssh
# session; what `turnsim drive` sends), then the same resume; the commands still
# running after the agent's exit, and when each effect was written, are printed too.
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

T0 = time.time()
log = []
root = tempfile.mkdtemp(prefix="qwen-sigterm-")


def ms():
    return int((time.time() - T0) * 1000)


class H(BaseHTTPRequestHandler):
    n = 0
    bodies = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if not body.get("tools"):
            self.send_response(404)
            self.end_headers()
            return
        H.n += 1
        n = H.n
        last = body["messages"][-1]
        H.bodies.append(body)
        log.append("+%6d ms request %d (%d messages; last: %s %.80s)" % (
            ms(), n, len(body["messages"]), last["role"], json.dumps(last.get("content"))))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def chunk(delta, finish=None):
            c = {"id": "c%d" % n, "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(("data: %s\n\n" % json.dumps(c)).encode())

        chunk({"role": "assistant", "content": "step %d" % n})
        if n <= 5:
            # A script, not `sleep 3; …` inline: qwen-code blocks a command that opens with sleep.
            args = json.dumps({"command": "sh %s/work.sh %d" % (root, n)})
            chunk({"tool_calls": [{"index": 0, "id": "call_%d" % n, "type": "function",
                                   "function": {"name": "run_shell_command", "arguments": args}}]})
            chunk({}, "tool_calls")
        else:
            chunk({}, "stop")
        self.wfile.write(b"data: [DONE]\n\n")


os.makedirs(root + "/home/.qwen")
os.makedirs(root + "/work")
open(root + "/work.sh", "w").write('sleep 3\necho "round $1" >> %s/effects\n' % root)
open(root + "/home/.qwen/settings.json", "w").write('{"privacy":{"usageStatisticsEnabled":false}}')
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_"))}
env["HOME"] = root + "/home"
def qwen(*extra):
    return subprocess.Popen(["qwen", "--auth-type", "openai", "--openai-api-key", "dummy", "--openai-base-url",
                             "http://127.0.0.1:%d/v1" % srv.server_address[1], "--model", "qwen3-coder-plus",
                             "--yolo", "--output-format", "stream-json", *extra],
                            cwd=root + "/work", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def agents():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"qwen-code/cli.js" in open("/proc/%s/cmdline" % pid, "rb").read() and \
               ("HOME=" + root + "/home").encode() in open("/proc/%s/environ" % pid, "rb").read():
                out.append(int(pid))
        except OSError:
            pass
    return out


p = qwen("Run the checks")
while H.n < 1 and ms() < 240000:
    time.sleep(0.05)
time.sleep(1)
log.append("+%6d ms processes: qwen (launcher) pid %d, agent pids %s" % (ms(), p.pid, agents()))
GROUP = {"INT": signal.SIGINT, "HUP": signal.SIGHUP}.get((sys.argv[1:] or [""])[0])


def commands():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()
            if root + "/work.sh" in cmd and "cli.js" not in cmd:
                out.append((int(pid), cmd.strip()))
        except OSError:
            pass
    return out


if GROUP:
    os.killpg(p.pid, GROUP)
    log.append("+%6d ms %s to the process group %d" % (ms(), GROUP.name, p.pid))
else:
    p.send_signal(signal.SIGTERM)
    log.append("+%6d ms SIGTERM to pid %d" % (ms(), p.pid))
p.wait()
log.append("+%6d ms qwen (pid %d) exited: %s; agent alive: %s" % (ms(), p.pid, p.returncode, agents()))
end = time.time() + 90
while agents() and time.time() < end:
    time.sleep(0.1)
log.append("+%6d ms agent %s; commands running: %s" % (
    ms(), "still alive (killed now)" if agents() else "gone", commands()))
if GROUP == signal.SIGHUP:
    time.sleep(4)
    eff = root + "/effects"
    if os.path.exists(eff):
        log.append("+%6d ms effects file last written (%s)" % (int((os.path.getmtime(eff) - T0) * 1000),
                                                           open(eff).read().split("\n")[:-1]))
for a in agents():
    os.kill(a, signal.SIGKILL)
if GROUP:
    first = len(H.bodies)
    qwen("--continue", "Continue").wait(timeout=300)
    for m in H.bodies[first]["messages"] if len(H.bodies) > first else []:
        if m["role"] == "tool" and m.get("tool_call_id") == "call_1":
            log.append("resumed request, the result of call_1: %s" % json.dumps(m["content"])[:300])
print("\n".join(log))
eff = root + "/effects"
print("effects:", open(eff).read().split() if os.path.exists(eff) else "none")
