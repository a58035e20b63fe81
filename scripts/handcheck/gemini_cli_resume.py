#!/usr/bin/env python3
# Hand check (no turnsim): does gemini-cli's `--resume` send a function response twice?
# A stdlib fake Gemini API on loopback asks, in the first run, for one
# run_shell_command call (`echo hi`) and then says "Done."; a second run resumes that
# session (`--resume latest`) with a new prompt. The resumed request's contents are
# printed (role and part kinds), and the script exits 1 when a user turn holds more
# functionResponse parts than the model turn before it has functionCall parts, which
# the Gemini API refuses ("Please ensure that the number of function response parts is
# equal to the number of function call parts of the function call turn.").
# Usage: handcheck/gemini_cli_resume.py PATH_TO_gemini   (HOME is a fresh temp dir)
import json, os, subprocess, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

bodies = []


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.reply("application/json", json.dumps({"models": []}))

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if ":countTokens" in self.path:
            return self.reply("application/json", json.dumps({"totalTokens": 1}))
        bodies.append(body)
        contents = body.get("contents", [])
        called = any("functionCall" in p for c in contents for p in c.get("parts", []))
        part = {"text": "Done."} if called else {"functionCall": {"name": "run_shell_command", "args": {"command": "echo hi"}}}
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
    gemini = sys.argv[1]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="gemini-home-")
    proj = tempfile.mkdtemp(prefix="gemini-proj-")
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                   "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}}, f)
    env = dict(os.environ, HOME=home, GEMINI_API_KEY="dummy",
               GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % srv.server_address[1])
    for args in (["-p", "Run the check."], ["--resume", "latest", "-p", "Run it again."]):
        n = len(bodies)
        subprocess.run([gemini, *args, "--yolo", "-m", "gemini-2.5-pro"], cwd=proj, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        print("%s: %d request(s)" % (" ".join(args), len(bodies) - n))
    resumed = bodies[2] if len(bodies) > 2 else {"contents": []}
    bad = False
    contents = resumed["contents"]
    for i, c in enumerate(contents):
        kinds = [next(iter(p)) for p in c.get("parts", [])]
        print("  contents[%d] %s %s" % (i, c.get("role"), kinds))
        calls = sum(k == "functionCall" for k in (next(iter(p)) for p in contents[i - 1].get("parts", []))) if i else 0
        if kinds.count("functionResponse") > calls:
            bad = True
    print("DUPLICATED function responses" if bad else "responses match the calls")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
