//! `turnsim-test-client`: a small agent client for `turnsim drive`'s own tests. It
//! runs a tool loop against an Anthropic Messages base URL, executes the shell
//! commands the model asks for, keeps its history in a file and resumes from it.
//!
//! Guarantee: in its clean mode it keeps the promises `drive` checks, so a failure
//! against it is a harness bug: the history file is rewritten (atomically) after every
//! step; on SIGINT, SIGTERM or SIGHUP the running tool's process group is killed and
//! the interrupted call gets an error `tool_result` that says so; a tool's shell
//! dies with the client even on SIGKILL (its own process group, `PR_SET_PDEATHSIG`;
//! what that shell started may outlive a SIGKILL, which drive reports as
//! informational); on resume a
//! call left without a result gets an error result, and is never run again. The
//! planted faults reproduce one behaviour each:
//! `--forget-result-after-sigint` drops the interrupted call's result;
//! `--rerun-after-restart` runs the last tool call again on resume;
//! `--orphan-setsid` runs tools in a session of their own (`setsid`, no death
//! signal), leaves them running when interrupted, and starts a helper process in
//! another session that it never ends; `--ignore-sigint` ignores SIGINT and keeps
//! working; `--drop-started-call` removes the interrupted call from the history
//! instead of recording its end; `--exit-before-signal` exits 1 (without running
//! it) as soon as the model asks for its first tool, unless resuming;
//! `--save-at-end` writes its history only when the model ends a turn (a loop that
//! hands over its messages when a run returns), so an interruption loses the
//! prompt and every finished result.
//! `--tool-child-ms MS` makes every tool command first fork a child that sleeps MS
//! milliseconds and leave it behind (`(sleep … &)`: the subshell that started it
//! exits at once, so the child is reparented while the tool runs); the tool itself
//! is waited for as usual. With an MS longer than the rest of the run the child
//! outlives the client; with a short one it is gone long before.
//! `--interactive` reads prompts from a terminal instead of the command line, and
//! takes Esc and Ctrl+C as keys (see `test_client/tty.rs`); while a turn runs it
//! draws a busy line (`turnsim-test-client: working (esc to cancel)`) four times a
//! second. Two behaviours of real TUIs after a key, each planted by a flag:
//! `--busy-after-key MS` keeps the turn open MS milliseconds after the key (the
//! busy line drawn, nothing sent, as a UI winding down a cancel), and
//! `--side-request-after-key` then sends one request without tools (as a UI asking
//! for a suggestion of the next prompt) before it shows its prompt; `--slow-exit MS`
//! takes MS milliseconds to leave after `/exit` (a signal ends the wait);
//! `--esc-twice` takes Esc as opencode's UI does: the first press of a turn only arms
//! (drawing "esc again to interrupt"), a second within two seconds interrupts (Ctrl+C
//! as before). `--api chat`,
//! `--api responses` or `--api gemini` speaks OpenAI's Chat Completions or Responses
//! API or the Gemini API instead of Anthropic's Messages (see `test_client/wire.rs`),
//! with the same behaviours.
//!
//! Usage: `turnsim-test-client --base-url URL --history FILE [--resume]
//! [FAULT FLAGS] [--api FORMAT] PROMPT`. Exit 0 when the model ends its turn, 128 + the signal's
//! number after an interruption (130 SIGINT, 143 SIGTERM, 129 SIGHUP), 1 on an
//! error.
//!
//! Built only with the `test-client` feature (which `cargo test` switches on), so
//! `cargo install --path sim` does not install it.
//!
//! Where `unsafe` lives and why: three libc calls std has no safe form of, each with
//! a SAFETY comment at its site: `signal` (install the SIGINT/SIGTERM/SIGHUP
//! handler, which only stores to an atomic, or ignore SIGINT),
//! `prctl(PR_SET_PDEATHSIG)` or `setsid` in `pre_exec` (a tool dies with the
//! client, or escapes it), and `killpg` (end the running tool's own process group).

#[path = "test_client/tty.rs"]
mod tty;
#[path = "test_client/wire.rs"]
mod wire;

use serde_json::{Value, json};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;
use wire::Api;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGINT);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// The conventional exit code after the signal that interrupted the client.
fn interrupted_code() -> ExitCode {
    ExitCode::from(u8::try_from(128 + SIGNAL.load(Ordering::SeqCst)).unwrap_or(130))
}

fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

#[derive(Default)]
struct Args {
    base_url: String,
    history: PathBuf,
    resume: bool,
    forget: bool,
    rerun: bool,
    orphan: bool,
    ignore_sigint: bool,
    drop_call: bool,
    exit_early: bool,
    save_at_end: bool,
    interactive: bool,
    tool_child_ms: Option<u32>,
    busy_after_key_ms: u64,
    slow_exit_ms: u64,
    side_request_after_key: bool,
    esc_twice: bool,
    api: Api,
    prompt: String,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--base-url" => a.base_url = it.next().ok_or("--base-url needs a value")?,
            "--history" => a.history = it.next().ok_or("--history needs a value")?.into(),
            "--resume" => a.resume = true,
            "--forget-result-after-sigint" => a.forget = true,
            "--rerun-after-restart" => a.rerun = true,
            "--orphan-setsid" => a.orphan = true,
            "--ignore-sigint" => a.ignore_sigint = true,
            "--drop-started-call" => a.drop_call = true,
            "--exit-before-signal" => a.exit_early = true,
            "--save-at-end" => a.save_at_end = true,
            "--interactive" => a.interactive = true,
            "--tool-child-ms" => {
                let v = it.next().ok_or("--tool-child-ms needs a value")?;
                a.tool_child_ms = Some(v.parse().map_err(|_| format!("--tool-child-ms {v:?}"))?);
            }
            "--busy-after-key" => {
                let v = it.next().ok_or("--busy-after-key needs a value")?;
                a.busy_after_key_ms = v.parse().map_err(|_| format!("--busy-after-key {v:?}"))?;
            }
            "--side-request-after-key" => a.side_request_after_key = true,
            "--esc-twice" => a.esc_twice = true,
            "--slow-exit" => {
                let v = it.next().ok_or("--slow-exit needs a value")?;
                a.slow_exit_ms = v.parse().map_err(|_| format!("--slow-exit {v:?}"))?;
            }
            "--api" => a.api = Api::parse(&it.next().ok_or("--api needs a value")?)?,
            s if s.starts_with("--") => return Err(format!("unknown flag {s}")),
            s => a.prompt = s.to_owned(),
        }
    }
    if a.base_url.is_empty()
        || a.history.as_os_str().is_empty()
        || (a.prompt.is_empty() != a.interactive)
    {
        return Err("usage: turnsim-test-client --base-url URL --history FILE [--resume] [--forget-result-after-sigint] [--rerun-after-restart] [--orphan-setsid] [--ignore-sigint] [--drop-started-call] [--exit-before-signal] [--save-at-end] [--tool-child-ms MS] [--busy-after-key MS] [--side-request-after-key] [--esc-twice] [--slow-exit MS] [--api messages|chat|responses|gemini] (PROMPT | --interactive)".into());
    }
    Ok(a)
}

/// The history file: the messages, and whether tool calls are in progress.
struct History {
    messages: Vec<Value>,
    pending: bool,
}

fn load(path: &Path) -> History {
    let v: Value = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    History {
        messages: v
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        pending: v.get("pending").and_then(Value::as_bool).unwrap_or(false),
    }
}

fn save(path: &Path, h: &History) {
    let text = json!({"messages": h.messages, "pending": h.pending}).to_string();
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

fn tool_uses(message: &Value) -> Vec<(String, String)> {
    message
        .get("content")
        .and_then(Value::as_array)
        .map(|bs| {
            bs.iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|b| {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                    let cmd = b
                        .pointer("/input/command")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    (id.to_owned(), cmd.to_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn result(id: &str, content: &str, is_error: bool) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error})
}

enum Ran {
    Done(String, bool),
    Interrupted,
}

/// Runs `sh -c command` in a process group of its own that dies with this process;
/// with `escape`, in a session of its own that outlives it.
fn run_tool(command: &str, escape: bool) -> Ran {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if escape {
        // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    } else {
        cmd.process_group(0);
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::Done(format!("cannot run the command: {e}"), true),
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                let mut out = String::new();
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                let out = out.trim().to_owned();
                return Ran::Done(
                    if out.is_empty() {
                        "(no output)".into()
                    } else {
                        out
                    },
                    !st.success(),
                );
            }
            Ok(None) if interrupted() && escape => return Ran::Interrupted,
            Ok(None) if interrupted() => {
                if pgid > 1 {
                    // SAFETY: the tool's own process group, started above.
                    unsafe {
                        libc::killpg(pgid, libc::SIGKILL);
                    }
                }
                let _ = child.wait();
                return Ran::Interrupted;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Ran::Done(format!("wait: {e}"), true),
        }
    }
}

/// The command as run: with `--tool-child-ms`, a child that sleeps that long is left
/// behind first (its output sent nowhere, so the tool's own output still ends).
fn with_child(command: &str, args: &Args) -> String {
    match args.tool_child_ms {
        Some(ms) => format!(
            "(sleep {}.{:03} >/dev/null 2>&1 </dev/null &)\n{command}",
            ms / 1000,
            ms % 1000
        ),
        None => command.to_owned(),
    }
}

/// Starts `sh -c command` in a session of its own and does not wait for it.
fn run_detached(command: &str) -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn()
}

/// Sends the history, retrying what a retry may fix; `Err` ends the client.
fn ask(base_url: &str, api: Api, messages: &[Value]) -> Result<(Value, String), String> {
    let body = wire::body(api, messages)?;
    let mut last = String::new();
    for attempt in 0..5u64 {
        match wire::post(base_url, api, body.as_bytes()) {
            Ok((200, v, _)) => return Ok(wire::read_reply(api, &v)),
            Ok((status, v, retry)) if status == 429 || status >= 500 => {
                last = format!("status {status}: {v}");
                let wait = retry.map_or(200 * (attempt + 1), |s| s.min(2) * 1000);
                std::thread::sleep(Duration::from_millis(wait));
            }
            Ok((status, v, _)) => return Err(format!("status {status}: {v}")),
            Err(e) => {
                last = e;
                std::thread::sleep(Duration::from_millis(200 * (attempt + 1)));
            }
        }
        if interrupted() {
            break;
        }
    }
    Err(last)
}

fn user_message(mut content: Vec<Value>, text: Option<&str>) -> Value {
    if let Some(t) = text {
        content.push(json!({"type": "text", "text": t}));
    }
    json!({"role": "user", "content": content})
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: the handler only stores to an atomic; SIG_IGN is a constant.
    unsafe {
        let sigint = if args.ignore_sigint {
            libc::SIG_IGN
        } else {
            on_signal as *const () as libc::sighandler_t
        };
        libc::signal(libc::SIGINT, sigint);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_signal as *const () as libc::sighandler_t);
    }
    let keys = args
        .interactive
        .then(|| tty::start(args.ignore_sigint, args.esc_twice, &INTERRUPTED, &SIGNAL));
    let prompt = match &keys {
        Some(rx) => {
            tty::ready();
            match rx.recv() {
                Ok(Some(p)) => p,
                _ => return ExitCode::SUCCESS,
            }
        }
        None => args.prompt.clone(),
    };
    if args.orphan && !args.resume {
        // A helper in a session of its own, never ended: what a clean-up by
        // process group cannot find.
        let _ = run_detached("sleep 600");
    }
    let mut h = if args.resume {
        load(&args.history)
    } else {
        History {
            messages: Vec::new(),
            pending: false,
        }
    };
    // Resume: close calls left without a result; the planted fault runs one again.
    let mut carried = Vec::new();
    let last_calls = h
        .messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(tool_uses)
        .unwrap_or_default();
    if args.rerun
        && let Some((id, cmd)) = last_calls.last()
    {
        let ran = run_tool(&with_child(cmd, &args), args.orphan);
        if h.pending
            && let Ran::Done(out, err) = ran
        {
            carried.push(result(id, &out, err));
        }
    }
    if h.pending {
        for (id, _) in &last_calls {
            if !carried
                .iter()
                .any(|r| r.get("tool_use_id").and_then(Value::as_str) == Some(id))
            {
                carried.push(result(
                    id,
                    "[Tool interrupted: the client stopped before this call finished; it was not run again]",
                    true,
                ));
            }
        }
    }
    add_prompt(&mut h, carried, &prompt);
    h.pending = false;
    save_step(&args, &h);
    tty::BUSY.store(true, Ordering::SeqCst);
    let code = turn(&args, &mut h);
    let Some(rx) = keys else {
        return code;
    };
    // Interactive: a key ended the turn (or it ended); a signal still ends the client.
    loop {
        if interrupted() && SIGNAL.load(Ordering::SeqCst) != 0 {
            return interrupted_code();
        }
        if INTERRUPTED.swap(false, Ordering::SeqCst) {
            after_key(&args);
            println!("\r\n[interrupted]");
        }
        tty::BUSY.store(false, Ordering::SeqCst);
        tty::ready();
        let Ok(Some(p)) = rx.recv() else {
            return leave(&args);
        };
        add_prompt(&mut h, Vec::new(), &p);
        save_step(&args, &h);
        tty::BUSY.store(true, Ordering::SeqCst);
        let _ = turn(&args, &mut h);
    }
}

/// What the planted flags make the UI do after a key ended a turn, while it still
/// counts as busy (its busy line drawn).
fn after_key(args: &Args) {
    std::thread::sleep(Duration::from_millis(args.busy_after_key_ms));
    if args.side_request_after_key {
        let ask = json!([{"role": "user", "content": [{"type": "text",
            "text": "Suggest what the user might type next."}]}]);
        let sent = wire::body(args.api, ask.as_array().map_or(&[], Vec::as_slice))
            .and_then(|b| serde_json::from_str::<Value>(&b).map_err(|e| e.to_string()))
            .and_then(|mut v| {
                if let Some(o) = v.as_object_mut() {
                    o.remove("tools");
                }
                wire::post(&args.base_url, args.api, v.to_string().as_bytes())
            });
        if let Err(e) = sent {
            eprintln!("turnsim-test-client: the request without tools failed: {e}");
        }
    }
}

/// Leaves the UI after `/exit`: with `--slow-exit`, only once that time has passed
/// or a signal (a hang-up) came.
fn leave(args: &Args) -> ExitCode {
    let until = std::time::Instant::now() + Duration::from_millis(args.slow_exit_ms);
    while std::time::Instant::now() < until {
        if interrupted() && SIGNAL.load(Ordering::SeqCst) != 0 {
            return interrupted_code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ExitCode::SUCCESS
}

/// Adds the prompt, with the results carried over on resume; it joins the last
/// user message when that one holds only results.
fn add_prompt(h: &mut History, carried: Vec<Value>, prompt: &str) {
    // The prompt joins the last user message when that one holds only results.
    let last_is_user = h
        .messages
        .last()
        .is_some_and(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    if carried.is_empty() && last_is_user {
        if let Some(Value::Array(content)) =
            h.messages.last_mut().and_then(|m| m.get_mut("content"))
        {
            content.push(json!({"type": "text", "text": prompt}));
        }
    } else {
        h.messages.push(user_message(carried, Some(prompt)));
    }
}

/// Saves the history after a step, unless the planted fault keeps it for the end of
/// the turn.
fn save_step(args: &Args, h: &History) {
    if !args.save_at_end {
        save(&args.history, h);
    }
}

/// One turn: requests and tool calls until the model ends it or an interruption.
fn turn(args: &Args, h: &mut History) -> ExitCode {
    for _ in 0..12 {
        if interrupted() {
            return interrupted_code();
        }
        let (content, stop) = match ask(&args.base_url, args.api, &h.messages) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("turnsim-test-client: {e}");
                return if interrupted() {
                    interrupted_code()
                } else {
                    ExitCode::from(1)
                };
            }
        };
        let assistant = json!({"role": "assistant", "content": content});
        let calls = tool_uses(&assistant);
        h.messages.push(assistant);
        if stop != "tool_use" || calls.is_empty() {
            h.pending = false;
            save(&args.history, h);
            println!("{}", json!({"stop_reason": stop}));
            return ExitCode::SUCCESS;
        }
        if args.exit_early && !args.resume {
            eprintln!("turnsim-test-client: exiting before the first tool (--exit-before-signal)");
            std::process::exit(1);
        }
        h.pending = true;
        save_step(args, h);
        let mut results = Vec::new();
        let mut cut = false;
        for (id, cmd) in &calls {
            if cut || interrupted() {
                cut = true;
                if !args.forget {
                    results.push(result(id, "[Request interrupted by user]", true));
                }
                continue;
            }
            match run_tool(&with_child(cmd, args), args.orphan) {
                Ran::Done(out, err) => results.push(result(id, &out, err)),
                Ran::Interrupted => {
                    cut = true;
                    if !args.forget {
                        results.push(result(id, "[Request interrupted by user]", true));
                    }
                }
            }
        }
        if cut && args.drop_call {
            // The planted fault: the interrupted call disappears from the history;
            // the turn's text stays, so every request is still valid and append-only.
            if let Some(Value::Array(blocks)) =
                h.messages.last_mut().and_then(|m| m.get_mut("content"))
            {
                blocks.retain(|b| b.get("type").and_then(Value::as_str) != Some("tool_use"));
                if blocks.is_empty() {
                    h.messages.pop();
                }
            }
        } else if !results.is_empty() {
            h.messages.push(user_message(results, None));
        }
        h.pending = false;
        save_step(args, h);
        if cut {
            eprintln!("turnsim-test-client: interrupted");
            return interrupted_code();
        }
    }
    ExitCode::from(1)
}
