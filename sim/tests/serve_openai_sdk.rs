//! The official `openai` Python SDK, unmodified, runs a full tool loop offline against
//! `turnsim serve` in both of OpenAI's formats (Responses and Chat Completions), through
//! its own retries of an injected 500 and a 429, and every request it sends gets a
//! clean verdict.
//!
//! Needs the SDK, so it is `#[ignore]`d; `$TURNSIM_PYTHON` names the interpreter (see
//! `python_sdk_support`).

use crate::python_sdk_support;
use crate::serve_support;

use serve_support::*;
use turnsim::testing::serve::tools::{LedgerLine, read_ledger};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scripts/openai_tool_loop.py"
);

const STEPS: &str = r#"[{"kind": "status", "status": 500},
    {"kind": "reply", "thinking": "Two checks.", "text": "Running the checks.", "tool_calls": [{"name": "exec_command"}, {"name": "exec_command"}], "stop": "tool_use"},
    {"kind": "status", "status": 429, "retry_after": 1},
    {"kind": "reply", "tool_calls": [{"name": "read_file"}], "stop": "tool_use"},
    {"kind": "reply", "text": "All checks ran.", "stop": "end_turn"}]"#;

fn loop_in(api: &str, test: &str) {
    let Some(python) = python_sdk_support::interpreter_with("openai", test) else {
        return;
    };
    let (server, dir) = start(script(STEPS), &format!("openai-sdk-{api}"));
    let summary = python_sdk_support::run_loop(
        &python,
        SCRIPT,
        &[&server.base_url(), "--api", api],
        &["OPENAI_API_KEY", "OPENAI_BASE_URL"],
    );
    assert_eq!(summary["finished"], true);
    assert_eq!(summary["tool_calls"], 3);
    assert_eq!(
        summary["requests"], 3,
        "the SDK's retries are invisible to the loop"
    );
    assert_eq!(server.server.steps_left(), 0);
    let records = server.server.records();
    let statuses: Vec<u16> = records.iter().map(|r| r.answer.status).collect();
    assert_eq!(statuses, vec![500, 200, 429, 200, 200], "{records:#?}");
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 5);
    assert!(
        verdicts.iter().all(|v| v.is_clean()),
        "{:#?}",
        verdicts.iter().flat_map(|v| v.lines()).collect::<Vec<_>>()
    );
    let finished = read_ledger(&dir.join("ledger"))
        .iter()
        .filter(|l| matches!(l, LedgerLine::Finish(_)))
        .count();
    assert_eq!(finished, 2, "both shell commands ran to the end");
}

#[test]
#[ignore = "needs the openai Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn the_openai_sdk_completes_a_responses_tool_loop_offline_with_clean_verdicts() {
    loop_in(
        "responses",
        "the_openai_sdk_completes_a_responses_tool_loop_offline_with_clean_verdicts",
    );
}

#[test]
#[ignore = "needs the openai Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn the_openai_sdk_completes_a_chat_completions_tool_loop_offline_with_clean_verdicts() {
    loop_in(
        "chat",
        "the_openai_sdk_completes_a_chat_completions_tool_loop_offline_with_clean_verdicts",
    );
}
