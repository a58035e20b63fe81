#!/usr/bin/env python3
# Reproduces one `turnsim drive` finding without turnsim: a stdlib server replays the
# scripted model's replies (Anthropic Messages, OpenAI Responses or Chat Completions,
# the Gemini API's generateContent, JSON or event stream, as the client asks), the client runs as it did, the signal is sent at the
# same point, and the finding is checked again. Usage: python3 repro.py
# Exit 1: reproduced; 0: not this time (the client is not deterministic).
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CFG = json.loads(r'''@CONFIG@''')
# An ignored signal stays ignored across exec: started with `&` or `nohup`, this script
# would hand the client an ignored SIGINT or SIGHUP, and the client would seem to
# ignore the signal. A caught one is reset to its default in the client, as from a
# terminal.
for _s in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM):
    if signal.getsignal(_s) == signal.SIG_IGN:
        signal.signal(_s, signal.default_int_handler)
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
# Every process of a tool's tree, by (pid, start time): the script the ledger names
# (`pid ID PID`), what it (or anything of the tree) started, and what shares the
# group of a script or one of its tree, looked at every 20 ms while the client runs, so a
# child stays its tool's after its parent died and it was reparented.
tree = {}
def proc_stat(pid):
    try:
        f = open("/proc/%s/stat" % pid).read()
    except OSError:
        return None
    w = f[f.rfind(")") + 2:].split()
    return None if w[0] == "Z" else (int(w[1]), int(w[2]), int(w[19]))
def cmdline(pid):
    try:
        return open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
def sample(client_pid):
    scripts = {}
    for line in open(ledger).read().splitlines() if os.path.exists(ledger) else []:
        w = line.split()
        if len(w) == 3 and w[0] == "pid" and w[2].isdigit():
            scripts[int(w[2])] = w[1]
    live = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        st = proc_stat(pid)
        if st:
            live[int(pid)] = st
    groups = {}
    for (pid, start), (tool, _) in tree.items():
        st = live.get(pid)
        if st and st[2] == start and st[1] != client_pid:
            groups[st[1]] = tool
    added = True
    while added:
        added = False
        for pid, (ppid, pgid, start) in live.items():
            if (pid, start) in tree:
                continue
            parent = live.get(ppid)
            tool = scripts.get(pid)
            if tool is None and parent and (ppid, parent[2]) in tree:
                tool = tree[(ppid, parent[2])][0]
            if tool is None and pgid != client_pid:
                tool = groups.get(pgid)
            if tool is not None:
                tree[(pid, start)] = (tool, cmdline(pid))
                if pgid != client_pid:
                    groups[pgid] = tool
                added = True
def tree_alive():
    return [(k, v) for k, v in tree.items() if (proc_stat(k[0]) or (0, 0, -1))[2] == k[1]]
lock = threading.Lock()
state = {"steps": list(CFG["first_steps"]), "ids": list(CFG["tool_ids"]), "log": [], "thinking": 0}

# The routes drive's server answers, and the format each speaks.
ROUTES = {"/v1/messages": "messages", "/v1/chat/completions": "chat", "/v1/responses": "responses"}

def route(path):
    # The format a path speaks; Gemini's is `/v1beta/models/MODEL:generateContent` (or
    # `:streamGenerateContent`), whatever the model.
    if path in ROUTES:
        return ROUTES[path]
    head, _, method = path.rpartition(":")
    if head.startswith(("/v1beta/models/", "/v1alpha/models/", "/v1/models/")) and method in ("generateContent", "streamGenerateContent"):
        return "gemini"
    return None

def ledger_id(wire_id):
    # An OpenAI call's id is call_X where the ledger (and Anthropic) says toolu_X.
    return "toolu_" + wire_id[5:] if wire_id.startswith("call_") else wire_id

def shell_field(body):
    # Where the client's shell tool takes its command, as serve picks it: a string
    # (`command`, `cmd`), else a list of strings (`commands`, cline's run_commands).
    decls = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            decls += t.get("functionDeclarations") or t.get("function_declarations") or [t.get("function") if isinstance(t.get("function"), dict) else t]
    for f in decls:
        if not isinstance(f, dict) or f.get("name") != CFG["shell_tool"]:
            continue
        props = (f.get("input_schema") or f.get("parameters") or f.get("parametersJsonSchema") or {}).get("properties") or {}
        for name in ("command", "cmd"):
            if isinstance(props.get(name), dict) and props[name].get("type", "string") == "string":
                return name, False
        cmds = props.get("commands")
        if isinstance(cmds, dict) and cmds.get("type") == "array" and isinstance(cmds.get("items"), dict) and cmds["items"].get("type", "string") == "string":
            return "commands", True
    return "command", False

def thinking_asked(body, api):
    # As serve: a Messages API request whose `thinking` is on (any type but "disabled").
    t = body.get("thinking")
    return api == "messages" and isinstance(t, dict) and t.get("type", "disabled") != "disabled"

def reply_blocks(step, body, api):
    blocks = [{"type": "text", "text": step["text"]}]
    if thinking_asked(body, api):
        # As serve: a reply to a request that turned thinking on opens with a signed
        # thinking block, each reply's its own (a client sends back what it was sent,
        # and a tool loop with thinking on and none in the reply is refused by the API).
        state["thinking"] += 1
        k = state["thinking"]
        blocks.insert(0, {"type": "thinking", "thinking": "Planning the next step (reply %d)." % k, "signature": "sig_repro_%04d" % k})
    if step.get("tool"):
        n = len(state["log"])
        fresh = "toolu_repro_%d" % n if api == "messages" else "call_repro_%d" % n
        tid = state["ids"].pop(0) if state["ids"] else fresh
        cmd = "sh '%s' %s '%s' %d" % (script, ledger_id(tid), ledger, CFG["tool_ms"])
        field, is_list = shell_field(body)
        blocks.append({"type": "tool_use", "id": tid, "name": CFG["shell_tool"], "input": {field: [cmd] if is_list else cmd}})
    return blocks

def sse(blocks, stop):
    ev = [("message_start", {"type": "message_start", "message": {"id": "msg_repro", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "thinking":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        elif b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in ev]

# OpenAI's formats. A cut stream ends inside the call's arguments (the first half of
# them sent), which is where the schedule's cut lands: "inside the tool call".
def oa_items(blocks, n):
    items = []
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            items.append({"id": "msg_repro_%d_%d" % (n, i), "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": b["text"], "annotations": [], "logprobs": []}]})
        else:
            items.append({"id": "fc_repro_%d_%d" % (n, i), "type": "function_call", "status": "completed",
                          "call_id": b["id"], "name": b["name"], "arguments": json.dumps(b["input"])})
    return items

def response(n, body, output, status):
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return {"id": "resp_repro_%d" % n, "object": "response", "created_at": 1700000000, "status": status,
            "background": False, "error": None, "incomplete_details": None, "instructions": None,
            "max_output_tokens": None, "model": body.get("model", "gpt-5"), "output": output,
            "parallel_tool_calls": True, "previous_response_id": None, "store": True, "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": body.get("tools") or [],
            "top_p": 1.0, "truncation": "disabled", "usage": usage if status == "completed" else None,
            "user": None, "metadata": {}}

def responses_sse(blocks, n, body, cut):
    ev = [{"type": "response.created", "response": response(n, body, [], "in_progress")}]
    items = oa_items(blocks, n)
    for i, item in enumerate(items):
        if item["type"] == "message":
            part = dict(item["content"][0], text="")
            ev.append({"type": "response.output_item.added", "output_index": i, "item": dict(item, status="in_progress", content=[])})
            ev.append({"type": "response.content_part.added", "item_id": item["id"], "output_index": i, "content_index": 0, "part": part})
            ev.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": item["content"][0]["text"], "logprobs": []})
            ev.append({"type": "response.output_text.done", "item_id": item["id"], "output_index": i, "content_index": 0, "text": item["content"][0]["text"], "logprobs": []})
            ev.append({"type": "response.content_part.done", "item_id": item["id"], "output_index": i, "content_index": 0, "part": item["content"][0]})
        else:
            args = item["arguments"]
            ev.append({"type": "response.output_item.added", "output_index": i, "item": dict(item, status="in_progress", arguments="")})
            if cut:
                ev.append({"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": i, "delta": args[:len(args) // 2]})
                break
            ev.append({"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": i, "delta": args})
            ev.append({"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": i, "arguments": args})
        ev.append({"type": "response.output_item.done", "output_index": i, "item": item})
    if not cut:
        ev.append({"type": "response.completed", "response": response(n, body, items, "completed")})
    for k, e in enumerate(ev):
        e["sequence_number"] = k
    return ["event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in ev]

def chat_message(blocks):
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
             for b in blocks if b["type"] == "tool_use"]
    return text, calls

CHAT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

def chat_json(blocks, n, body):
    text, calls = chat_message(blocks)
    msg = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        msg["tool_calls"] = calls
    return {"id": "chatcmpl-repro-%d" % n, "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "gpt-5"), "usage": CHAT_USAGE,
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}]}

def chat_sse(blocks, n, body, cut):
    text, calls = chat_message(blocks)
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-repro-%d" % n, "object": "chat.completion.chunk", "created": 1700000000,
                "model": body.get("model", "gpt-5"), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    ev = [chunk({"role": "assistant", "content": ""}), chunk({"content": text})]
    for i, c in enumerate(calls):
        args = c["function"]["arguments"]
        ev.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function", "function": {"name": c["function"]["name"], "arguments": ""}}]}))
        if cut:
            ev.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": args[:len(args) // 2]}}]}))
            break
        ev.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": args}}]}))
    if not cut:
        ev.append(chunk({}, "tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            ev.append(dict(chunk({}), choices=[], usage=CHAT_USAGE))
    out = ["data: %s\n\n" % json.dumps(e) for e in ev]
    return out if cut else out + ["data: [DONE]\n\n"]

# The Gemini API: a call goes out whole, without an id (as Google's API sends it), and
# the client names it; a cut stream ends after the text, before the call.
def gemini_response(blocks, body, path, done=True):
    parts = [{"text": b["text"]} if b["type"] == "text" else {"functionCall": {"name": b["name"], "args": b["input"]}} for b in blocks]
    cand = {"content": {"role": "model", "parts": parts}, "index": 0}
    if done:
        cand["finishReason"] = "STOP"
    model = path.rpartition(":")[0].rpartition("/")[2]
    return {"candidates": [cand], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": model, "responseId": "repro"}

def gemini_sse(blocks, body, path, cut):
    text = [b for b in blocks if b["type"] == "text"]
    if not cut and len(text) == len(blocks):
        return ["data: %s\r\n\r\n" % json.dumps(gemini_response(blocks, body, path))]
    if cut:
        return ["data: %s\r\n\r\n" % json.dumps(gemini_response(text, body, path, False))]
    return ["data: %s\r\n\r\n" % json.dumps(gemini_response(text, body, path, False)),
            "data: %s\r\n\r\n" % json.dumps(gemini_response([b for b in blocks if b["type"] != "text"], body, path))]

def error_reply(api, status):
    # The schedule's 529 is OpenAI's and Gemini's 503; a 429 always says when to come back.
    if api == "gemini":
        status = 503 if status == 529 else status
        word = "UNAVAILABLE" if status == 503 else "RESOURCE_EXHAUSTED"
        return status, {"error": {"code": status, "message": "repro", "status": word}}
    if api == "messages":
        kind = "overloaded_error" if status == 529 else "rate_limit_error"
        return status, {"type": "error", "error": {"type": kind, "message": "repro"}}
    status = 503 if status == 529 else status
    kind = "server_error" if status == 503 else "rate_limit_exceeded"
    return status, {"error": {"message": "repro", "type": kind, "param": None, "code": kind}}

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
        api = route(path)
        with lock:
            state["log"].append({"t": boot_ms() - T0, "path": path, "body": body})
            n = len(state["log"])
            tools = api is not None and bool(body.get("tools"))
            step = state["steps"].pop(0) if tools and state["steps"] else None
        if path.endswith("/count_tokens"):
            return self.send(200, {"input_tokens": 10})
        if path.endswith(":countTokens"):
            return self.send(200, {"totalTokens": 10})
        if api is None:
            return self.do_GET()
        if step is None:
            step = {"kind": "reply", "text": "ok", "tool": False}
        if step["kind"] == "status":
            extra = [("retry-after", "1")] if step["status"] == 429 else []
            return self.send(*error_reply(api, step["status"]), extra)
        blocks = reply_blocks(step, body, api)
        cut = step["kind"] == "cut"
        if api == "gemini" and ":streamGenerateContent" not in path:
            return self.send(200, gemini_response(blocks, body, path))
        if api != "gemini" and not body.get("stream"):
            if api == "chat":
                return self.send(200, chat_json(blocks, n, body))
            if api == "responses":
                return self.send(200, response(n, body, oa_items(blocks, n), "completed"))
            stop = "tool_use" if step.get("tool") else "end_turn"
            return self.send(200, {"id": "msg_repro", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        if api == "gemini":
            events = gemini_sse(blocks, body, path, cut)
        elif api == "chat":
            events = chat_sse(blocks, n, body, cut)
        elif api == "responses":
            events = responses_sse(blocks, n, body, cut)
        else:
            events = sse(blocks, "tool_use" if step.get("tool") else "end_turn")
            if cut:
                # The schedule counts the script's events; a thinking block added
                # here (start, two deltas, stop) moves the cut by its length, as serve's.
                added = 4 if blocks[0]["type"] == "thinking" else 0
                events = events[:step["after_events"] + added]
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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "OPENCODE", "XDG_", "OPENAI_", "CODEX_", "QWEN_", "PI_CODING_AGENT", "CLINE_", "GEMINI_", "GOOGLE_"))}
    home = os.path.join(root, "home")
    # Configuration the client reads only from a file (its base URL holds this server's port).
    for rel, content in CFG.get("home_files", []):
        path = os.path.join(home, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(fill(content, prompt))
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
        sample(p.pid)
        time.sleep(0.02)
    end = boot_ms() - T0
    print("+%6d ms client exited with %s" % (end, p.returncode))
    return sent, end

def answered(body):
    # The ledger ids of the calls a request carries a result for, in any of the formats.
    ids = set()
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "tool":
            ids.add(m.get("tool_call_id"))
        for b in m.get("content") if isinstance(m, dict) and isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                ids.add(b.get("tool_use_id"))
    for it in body.get("input") if isinstance(body.get("input"), list) else []:
        if isinstance(it, dict) and it.get("type") == "function_call_output":
            ids.add(it.get("call_id"))
    out = {ledger_id(i) for i in ids if isinstance(i, str)}
    # Gemini: the client names each call itself; a call is known by the ledger id its
    # command carries, and a response by the call it answers (its id, else its name).
    named = {}
    for c in gemini_contents(body):
        for p in c.get("parts") or []:
            call = p.get("functionCall") if isinstance(p, dict) else None
            if isinstance(call, dict):
                word = next((w for w in json.dumps(call.get("args")).replace("'", " ").replace('"', " ").split() if w.startswith("toolu_")), None)
                if word:
                    named[call.get("id") or call.get("name")] = word
                    named[call.get("name")] = word
            resp = p.get("functionResponse") if isinstance(p, dict) else None
            if isinstance(resp, dict):
                word = named.get(resp.get("id")) or named.get(resp.get("name"))
                if word:
                    out.add(word)
    return out

def gemini_contents(body):
    c = body.get("contents")
    return [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []

def gemini_extra_responses(body):
    # The Gemini API's count rule: the user turn after a model turn with calls holds
    # exactly one functionResponse per call. Each turn that holds more, as (index, n, calls).
    out, contents = [], gemini_contents(body)
    kinds = lambda c: [next(iter(p)) for p in c.get("parts") or [] if isinstance(p, dict) and p]
    for i, c in enumerate(contents):
        n = kinds(c).count("functionResponse")
        calls = kinds(contents[i - 1]).count("functionCall") if i and contents[i - 1].get("role") == "model" else 0
        if c.get("role") != "model" and n > calls:
            out.append((i, n, calls))
    return out

def read_ledger():
    out = []
    for line in open(ledger).read().splitlines() if os.path.exists(ledger) else []:
        w = line.split()
        if w and w[0] in ("start", "effect", "finish") and len(w) >= 3:
            out.append((w[0], w[1], int(w[2][2:]) - T0, " ".join(w[3:])))
    return out

sent, end = run(CFG["command"], CFG["prompt1"], CFG["signal"])
n_first = len(state["log"])
# A process of a tool's tree still alive 300 ms after the client exited ran on
# without it; watched until it ends or the tool's time (and 2 s) has passed.
time.sleep(0.3)
survivors = {k: [v[0], v[1], None] for k, v in tree_alive()}
deadline = time.time() + (CFG["tool_ms"] + 2000) / 1000
while time.time() < deadline:
    for k, s in survivors.items():
        if s[2] is None and (proc_stat(k[0]) or (0, 0, -1))[2] != k[1]:
            s[2] = boot_ms() - T0
    time.sleep(0.05)
clean_up()
for k, i, t, who in read_ledger():
    print("+%6d ms %s %s %s%s" % (t, k, i, who, "  (after the client exited)" if t > end else ""))
def user_texts(body):
    # Every text of the user's messages, in any of the formats.
    out = []
    def texts(content):
        if isinstance(content, str):
            out.append(content)
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                out.append(b["text"])
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            texts(m.get("content"))
    for c in gemini_contents(body):
        if c.get("role") != "model":
            texts(c.get("parts"))
    inp = body.get("input")
    if isinstance(inp, str):
        out.append(inp)
    for it in inp if isinstance(inp, list) else []:
        if isinstance(it, dict) and it.get("role") == "user":
            texts(it.get("content"))
    return out

# Every checker the run failed that this script can judge on its own, each checked.
found = []
checks = CFG["checks"]
if "orphaned_tool" in checks:
    found += [("orphaned_tool", "tool %s wrote its effect at +%d ms, %d ms after the client exited" % (i, t, t - end))
              for k, i, t, _ in read_ledger() if k == "effect" and t > end]
    found += [("orphaned_tool", "pid %d (`%s`) of tool %s was alive 300 ms after the client exited at +%d ms, %s" % (
                  k[0], s[1], s[0], end, "until +%d ms" % s[2] if s[2] is not None else "until this script killed it"))
              for k, s in sorted(survivors.items())]
if "no_effect_after_cancel" in checks and sent is not None:
    found += [("no_effect_after_cancel", "request to %s at +%d ms, after the signal" % (r["path"], r["t"])) for r in state["log"][:n_first] if r["t"] > sent]
    found += [("no_effect_after_cancel", "tool %s started at +%d ms, after the signal" % (i, t)) for k, i, t, _ in read_ledger() if k == "start" and sent < t <= end]
resumed = [c for c in ("started_call_represented", "no_lost_observation") if c in checks]
if CFG.get("resume_in_terminal") and (resumed or "verdicts_clean" in checks):
    # The client resumes only in its terminal UI (cline): this script runs no pty.
    print("the resume runs in a terminal, which this script does not drive; %s: judged by turnsim itself (`turnsim drive --replay DIR/run.json`)" % ", ".join(resumed or ["verdicts_clean"]))
    resumed = []
elif resumed or "verdicts_clean" in checks:
    with lock:
        state["steps"] = list(CFG["resume_steps"])
    run(CFG["resume"], CFG["prompt2"], None, True)
    req = next((r["body"] for r in state["log"][n_first:] if route(r["path"]) and r["body"].get("tools")), None)
    results = answered(req or {})
    done_before = {i for k, i, t, _ in read_ledger() if k == "finish" and sent is not None and t <= sent}
    cut = [i for k, i, t, _ in read_ledger() if k == "start" and t <= end and i not in done_before]
    for check in resumed:
        if req is None:
            found.append((check, "the resumed client sent no tool-bearing request"))
            continue
        want = cut if check == "started_call_represented" else sorted(done_before)
        found += [(check, "the resumed request has no tool_result for %s" % i) for i in want if i not in results]
        if check == "no_lost_observation":
            said = "\n".join(user_texts(req))
            found += [(check, "the resumed request lost the prompt %s" % m)
                      for m in ("[turnsim-drive prompt 1]", "[turnsim-drive prompt 2]") if m not in said]
if "verdicts_clean" in checks:
    # Of the request rules, this script judges one on its own: Gemini's count of function
    # responses against the calls they answer (what gemini-cli's --resume breaks).
    found += [("verdicts_clean", "request %d to %s: contents[%d] holds %d functionResponse part(s) for %d call(s) of the model turn before it" % (k + 1, r["path"], i, n, calls))
              for k, r in enumerate(state["log"]) if route(r["path"]) == "gemini" for i, n, calls in gemini_extra_responses(r["body"])]
for check in checks:
    if check not in ("orphaned_tool", "no_effect_after_cancel", "started_call_represented", "no_lost_observation", "verdicts_clean"):
        print("this script re-runs the schedule; %s is judged by turnsim itself (see report.json)" % check)
if "verdicts_clean" in checks:
    print("verdicts_clean: only Gemini's function-response count is judged here; every other request rule by turnsim itself (see report.json)")
clean_up()
for check, f in found:
    print("REPRODUCED %s: %s" % (check, f))
print("files: " + root)
sys.exit(1 if found else 0)
