#!/usr/bin/env python3
# Hand check (no turnsim): does gemini-cli stop on SIGTERM (`kill PID`, what timeout(1),
# a supervisor or a CI runner sends to the process it started)?
# A stdlib fake Gemini API on loopback asks for one run_shell_command call that writes
# `start`, sleeps 4 s and writes `finish` to a marker file, then says "Done.". The
# script starts `gemini -p` in a session of its own, waits for `start`, sends SIGTERM to
# the pid it started (the `gemini` launcher), and reports what followed. Exit 1 when
# gemini-cli went on after SIGTERM: the tool finished or another model request was
# sent. (With GEMINI_CLI_NO_RELAUNCH=1, no launcher between, it stops at once.)
# With `--sigint`, Ctrl+C as a terminal sends it (SIGINT to the whole process group)
# instead: exit 1 when the tool's process outlives the client and writes `finish`
# after the client has exited (an orphan). With `--sighup`, SIGHUP (a closed terminal, a
# dropped ssh session) goes to the `gemini` pid, judged as with `--sigint`.
# Usage: handcheck/gemini_cli_sigterm.py PATH_TO_gemini [--sigint|--sighup]   (HOME: a fresh temp dir)
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.reply("application/json", json.dumps({"models": []}))

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if ":countTokens" in self.path:
            return self.reply("application/json", json.dumps({"totalTokens": 1}))
        requests.append(time.time())
        contents = body.get("contents", [])
        called = any("functionCall" in p for c in contents for p in c.get("parts", []))
        cmd = "echo start >> '%s'; sleep 4; echo finish >> '%s'" % (MARK, MARK)
        part = {"text": "Done."} if called else {"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                 "modelVersion": "gemini-2.5-pro"}
        if ":streamGenerateContent" in self.path:
            self.reply("text/event-stream", "data: %s\n\n" % json.dumps(chunk))
        else:
            self.reply("application/json", json.dumps(chunk))

    def reply(self, kind, text):
        data = text.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


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
    env = dict(os.environ, HOME=home, GEMINI_API_KEY="dummy",
               GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % srv.server_address[1])
    p = subprocess.Popen([gemini, "-p", "Run the check.", "--yolo", "-m", "gemini-2.5-pro"], cwd=proj, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(MARK) and "start" in open(MARK).read()):
        time.sleep(0.05)
    sent = time.time()
    if "--sigint" in sys.argv or "--sighup" in sys.argv:
        if "--sigint" in sys.argv:
            os.killpg(p.pid, signal.SIGINT)
            print("SIGINT sent to process group %d while the tool ran" % p.pid)
        else:
            os.kill(p.pid, signal.SIGHUP)
            print("SIGHUP sent to pid %d while the tool ran" % p.pid)
        code = p.wait(timeout=30)
        exited = time.time()
        time.sleep(5)
        marks = open(MARK).read().split() if os.path.exists(MARK) else []
        print("exit: %s after %.1f s; marker 5 s later: %s; model requests after the signal: %d"
              % (code, exited - sent, marks, sum(t > sent for t in requests)))
        # The marker's last write (`finish`) came after the client had exited.
        orphan = "finish" in marks and os.path.getmtime(MARK) > exited
        print("TOOL RAN ON AFTER THE CLIENT EXITED" if orphan else "the tool ended with the client")
        return 1 if orphan else 0
    os.kill(p.pid, signal.SIGTERM)
    print("SIGTERM sent to pid %d while the tool ran" % p.pid)
    try:
        code = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        code = "still running 30 s later (killed)"
    after = sum(t > sent for t in requests)
    marks = open(MARK).read().split() if os.path.exists(MARK) else []
    print("exit: %s; model requests after SIGTERM: %d; marker: %s" % (code, after, marks))
    went_on = "finish" in marks or after > 0
    print("WENT ON AFTER SIGTERM" if went_on else "stopped on SIGTERM")
    return 1 if went_on else 0


if __name__ == "__main__":
    sys.exit(main())
