#!/usr/bin/env python3
# Hand check (no turnsim): what gemini-cli's terminal UI does with Esc or Ctrl+C typed
# while a shell command runs. A stdlib fake Gemini API on loopback asks for one
# run_shell_command call that writes `start`, sleeps 8 s and writes `finish` to a
# marker file, then says "Done." (and answers a request without tools with "{}"). The
# UI runs in a pty of its own (HOME a fresh temp dir, YOLO); the prompt is typed; 1 s
# after `start` the key is typed (bytes, no signal). The script then watches the
# command's `sleep` process and prints how long after the key it was gone, whether
# `finish` was written, and the model requests after the key (with and without
# tools). Exit 1 when the turn went on after the key: `finish` written or a request
# with tools sent.
# Usage: handcheck/gemini_cli_tui_key.py PATH_TO_gemini (esc|ctrl-c)
import fcntl, json, os, re, select, signal, struct, subprocess, sys, tempfile, termios
import threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requests = []  # (time, has_tools)


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.reply("application/json", json.dumps({"models": []}))

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if ":countTokens" in self.path:
            return self.reply("application/json", json.dumps({"totalTokens": 1}))
        has_tools = bool(body.get("tools"))
        requests.append((time.time(), has_tools))
        contents = body.get("contents", [])
        called = any("functionCall" in p for c in contents for p in c.get("parts", []))
        cmd = "echo start >> '%s'; sleep 8; echo finish >> '%s'" % (MARK, MARK)
        if not has_tools:
            part = {"text": "{}"}
        elif called:
            part = {"text": "Done."}
        else:
            part = {"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}
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


def visible(raw):
    text = re.sub(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b.", "", raw)
    return re.sub(r"\s+", "", text)


def sleepers():
    """Pids of `sleep 8` processes whose parent's command line names the marker."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            if cmd[:2] != [b"sleep", b"8"]:
                continue
            ppid = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[1]
            if MARK.encode() in open("/proc/%s/cmdline" % ppid, "rb").read():
                out.append(int(pid))
        except (OSError, IndexError):
            pass
    return out


def main():
    global MARK
    gemini, key = sys.argv[1], sys.argv[2]
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
            r, _, _ = select.select([master], [], [], 0.02)
            if r:
                try:
                    screen.append(os.read(master, 65536).decode("utf-8", "replace"))
                except OSError:
                    return False
            if cond():
                return True
        return cond()

    marks = lambda: open(MARK).read().split() if os.path.exists(MARK) else []
    if not pump(time.time() + 90, lambda: "Typeyourmessage" in visible("".join(screen))):
        print("the UI never showed its input box")
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    os.write(master, b"Run the check with the shell tool.")
    pump(time.time() + 1, lambda: False)
    os.write(master, b"\r")
    # A UI still taking in the typed text can swallow the first Enter: again, up to 3
    # times, while no request came.
    for _ in range(3):
        if pump(time.time() + 8, lambda: requests):
            break
        os.write(master, b"\r")
    if not pump(time.time() + 60, lambda: "start" in marks()):
        with open(os.path.join(proj, "screen.raw"), "w") as f:
            f.write("".join(screen))
        print("the command never started (screen: %s)" % os.path.join(proj, "screen.raw"))
        os.killpg(p.pid, signal.SIGKILL)
        return 2
    pump(time.time() + 1, lambda: False)
    watched = sleepers()
    os.write(master, b"\x1b" if key == "esc" else b"\x03")
    sent = time.time()
    pump(sent + 12, lambda: not any(os.path.exists("/proc/%d" % s) for s in watched))
    gone = time.time() - sent
    pump(time.time() + 8, lambda: False)
    after = [t for t in requests if t[0] > sent]
    with_tools = sum(1 for _, k in after if k)
    up = p.poll() is None
    os.killpg(p.pid, signal.SIGKILL)
    print("%s typed 1 s into the command; its sleep (pids %s) gone %.2f s after the key; "
          "marker 8 s later: %s; requests after the key: %d with tools, %d without; client still up: %s"
          % (key, watched, gone, marks(), with_tools, len(after) - with_tools, up))
    went_on = "finish" in marks() or with_tools > 0
    print("THE TURN WENT ON AFTER THE KEY" if went_on else "cancelled at the key")
    return 1 if went_on else 0


if __name__ == "__main__":
    sys.exit(main())
