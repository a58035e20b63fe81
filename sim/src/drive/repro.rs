//! A one-command reproduction of a finding that needs no turnsim: `repro.py` in the
//! run's directory.
//!
//! Guarantee: the script is self-contained Python 3 standard library: it embeds the
//! client's command and environment, the scripted replies (the same steps and
//! tool-use ids the server played), the tool script, the signal and its timing,
//! and every check that failed (each one it can judge on its own is judged); it
//! runs in a fresh temporary directory and exits 1 when a finding reproduces, 0 when
//! none did this time. It answers the routes
//! drive's server answers, each in its own framing: Anthropic `/v1/messages`, and
//! OpenAI `/v1/responses` and `/v1/chat/completions` (a JSON body, or the event
//! stream when the request asks for one; an OpenAI call's `call_X` id is the
//! ledger's `toolu_X`, as in serve). As serve, an Anthropic reply to a request that
//! turned thinking on opens with a signed thinking block, each reply's own text and
//! signature, so a thinking-on client gets the replies the API would send and can
//! echo them back. What it replays is the schedule, not the byte
//! stream: an Anthropic stream cut is cut at the same event count of its own simpler
//! stream, an OpenAI one inside the call's arguments (where the schedule's cut
//! lands), so a finding that depends on the exact bytes is judged by
//! `turnsim drive --replay`, which the report also names.

use super::report::RunReport;
use super::run::{RunFile, first_steps, resume_steps};
use crate::scenario::ScriptedResponse;
use crate::serve::script::Step;
use serde_json::{Value, json};

const TEMPLATE: &str = include_str!("repro.py");

fn step_json(step: &Step) -> Value {
    match step {
        Step::Status { status, .. } => json!({"kind": "status", "status": status}),
        Step::Cut {
            after_events,
            reply,
            ..
        } => {
            let mut v = reply.as_ref().map_or(json!({"text": ""}), reply_json);
            v["kind"] = json!("cut");
            v["after_events"] = json!(after_events);
            v
        }
        Step::Sim(r) => reply_json(r),
        _ => json!({"kind": "reply", "text": "ok", "tool": false}),
    }
}

fn reply_json(r: &ScriptedResponse) -> Value {
    match r {
        ScriptedResponse::Reply {
            text, tool_calls, ..
        } => json!({"kind": "reply", "text": text, "tool": !tool_calls.is_empty()}),
        _ => json!({"kind": "reply", "text": "ok", "tool": false}),
    }
}

/// The script's text for `rep`, a failing run of `file`.
pub fn script(file: &RunFile, rep: &RunReport, tool_ids: &[String]) -> String {
    let s = &file.schedule;
    let p = &file.profile;
    let config = json!({
        "command": p.command,
        "resume": p.resume,
        "env": p.env,
        "home_files": p.home_files,
        "shell_tool": p.shell_tool,
        "tool_ms": s.tool_ms,
        "prompt1": super::run::PROMPT_1,
        "prompt2": super::run::PROMPT_2,
        "repo": super::profiles::repo_dir().display().to_string(),
        "first_steps": first_steps(s, &p.shell_tool).iter().map(step_json).collect::<Vec<_>>(),
        "resume_steps": resume_steps(&p.shell_tool).iter().map(step_json).collect::<Vec<_>>(),
        "tool_ids": tool_ids,
        "signal": rep.signal_sent.as_ref().map(|_| json!({
            "name": s.interrupt.map(|i| i.name()),
            "at_tool": s.interrupt_at_tool,
            "delay_ms": s.interrupt_delay_ms,
        })),
        "checks": rep.failing(),
        "resume_in_terminal": file.terminal.as_ref().is_some_and(|t| t.resume_only),
    });
    TEMPLATE
        .replace(
            "@CONFIG@",
            &config.to_string().replace("'''", "\\u0027\\u0027\\u0027"),
        )
        .replace("@TOOL@", super::tool::SCRIPT)
}

/// Writes `repro.py` next to the run's report.
pub fn write(file: &RunFile, rep: &RunReport) -> Result<(), String> {
    let ids: Vec<String> = crate::serve::record::read_dir(&rep.dir.join("record"))
        .unwrap_or_default()
        .iter()
        .flat_map(|r| r.answer.tool_use_ids.clone())
        .collect();
    let path = rep.dir.join("repro.py");
    crate::scenario::write_atomic(&path, script(file, rep, &ids).as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}
