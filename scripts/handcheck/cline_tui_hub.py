#!/usr/bin/env python3
# Hand check (no turnsim) for cline 3.0.65's terminal UI: it starts the hub daemon
# (`cline --cline-hub-daemon … --port P`, detached: its own session) even with
# CLINE_SESSION_BACKEND_MODE=local, and the daemon outlives a clean `/quit`.
# The TUI runs in a pty with a fresh HOME (the provider file points at a closed port:
# no model request is needed), waits for its status line, types `/quit`, and prints
# the TUI's exit and every process of the run alive 5 s later (then kills them).
# Usage: handcheck/cline_tui_hub.py  (with cline on PATH). CLINE_HUB_PORT=25991 keeps
# its hub apart from one already running on the default port (25463).
import fcntl, json, os, pty, re, select, signal, struct, tempfile, termios, time

root = tempfile.mkdtemp(prefix="cline-hub-")
home = root + "/home"
os.makedirs(home + "/.cline/data/settings")
os.makedirs(root + "/work")
open(home + "/.cline/data/settings/providers.json", "w").write(json.dumps({
    "version": 1, "lastUsedProvider": "openai-compatible",
    "providers": {"openai-compatible": {"settings": {
        "provider": "openai-compatible", "apiKey": "dummy", "model": "gpt-4o",
        "baseUrl": "http://127.0.0.1:9/v1"}, "updatedAt": "2026-01-01T00:00:00.000Z"}}}))
# The "Try ClinePass" notice already shown (else it takes the first key).
open(home + "/.cline/data/settings/cli-notices.json", "w").write(
    '{"shown":{"cline-cli-cline-pass-intro":true,"cline-cli-desktop-launch":true}}')
T0 = time.time()


def ms():
    return int((time.time() - T0) * 1000)


def ours():
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if ("HOME=" + home).encode() in open("/proc/%s/environ" % pid, "rb").read():
                cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()[:120]
                sid = os.getsid(int(pid))
                found.append((int(pid), "sid %d" % sid, cmd))
        except OSError:
            pass
    return found


pid, fd = pty.fork()
if pid == 0:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLINE_", "OPENAI_", "XDG_"))}
    env.update(HOME=home, TERM="xterm-256color", CLINE_SESSION_BACKEND_MODE="local",
               CLINE_HUB_PORT=os.environ.get("CLINE_HUB_PORT", "25991"))
    os.chdir(root + "/work")
    os.execvpe("cline", ["cline", "--tui", "-P", "openai-compatible", "-m", "gpt-4o"], env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
screen, typed, status = b"", None, None
while ms() < 120000:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            screen += os.read(fd, 65536)
        except OSError:
            break
    flat = re.sub(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\s", b"", screen)
    if typed is None and b"Auto-approveallenabled" in flat:
        print("+%6d ms ready; processes: %s" % (ms(), ours()))
        os.write(fd, b"/quit")
        time.sleep(1)
        os.write(fd, b"\r")
        typed = ms()
        print("+%6d ms typed /quit" % typed)
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
print("+%6d ms the TUI exited: status %s" % (ms(), status))
time.sleep(5)
left = ours()
print("+%6d ms alive 5 s after its exit: %s" % (ms(), left))
for p, _, _ in left:
    os.kill(p, signal.SIGKILL)
print("files:", root)
