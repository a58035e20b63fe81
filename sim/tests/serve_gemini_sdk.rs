//! Google's official `google-genai` Python SDK, unmodified, runs a full tool loop
//! offline against `turnsim serve`'s Gemini API (streamed and not, through its own
//! retries of an injected 500), and every request it sends gets a clean verdict; a
//! client that breaks its history (a user text where the function responses belong)
//! is refused with the API's 400 and gets a verdict naming the Gemini rule it breaks.
//!
//! Needs the SDK, so it is `#[ignore]`d; `$TURNSIM_PYTHON` names the interpreter (see
//! `python_sdk_support`).

use crate::python_sdk_support;
use crate::serve_support;

use serve_support::*;
use turnsim::testing::serve::tools::{LedgerLine, read_ledger};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scripts/gemini_tool_loop.py"
);

const STEPS: &str = r#"[{"kind": "status", "status": 500},
    {"kind": "reply", "text": "Running the checks.", "tool_calls": [{"name": "exec_command"}, {"name": "exec_command"}], "stop": "tool_use"},
    {"kind": "reply", "tool_calls": [{"name": "read_file"}], "stop": "tool_use"},
    {"kind": "reply", "text": "All checks ran.", "stop": "end_turn"}]"#;

#[test]
#[ignore = "needs the google-genai Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn the_google_genai_sdk_completes_a_streamed_tool_loop_offline_with_clean_verdicts() {
    let test = "the_google_genai_sdk_completes_a_streamed_tool_loop_offline_with_clean_verdicts";
    let Some(python) = python_sdk_support::interpreter_with("google.genai", test) else {
        return;
    };
    let (server, dir) = start(script(STEPS), "gemini-sdk-loop");
    let summary = python_sdk_support::run_loop(
        &python,
        SCRIPT,
        &[&server.base_url()],
        &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
    );
    assert_eq!(summary["finished"], true, "{summary}");
    assert_eq!(summary["tool_calls"], 3);
    assert_eq!(
        summary["requests"], 3,
        "the SDK's retry is invisible to the loop"
    );
    assert_eq!(server.server.steps_left(), 0);
    let records = server.server.records();
    let seen: Vec<(u16, bool, &str)> = records
        .iter()
        .map(|r| {
            let path = r.target.split('?').next().unwrap_or("");
            (
                r.answer.status,
                r.answer.stream,
                path.rsplit(':').next().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (500, true, "streamGenerateContent"),
            (200, true, "streamGenerateContent"),
            (200, false, "generateContent"),
            (200, true, "streamGenerateContent"),
        ],
        "{records:#?}"
    );
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 4);
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
#[ignore = "needs the google-genai Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn a_google_genai_client_that_drops_its_function_responses_gets_a_verdict_naming_the_unanswered_call()
 {
    let test = "a_google_genai_client_that_drops_its_function_responses_gets_a_verdict_naming_the_unanswered_call";
    let Some(python) = python_sdk_support::interpreter_with("google.genai", test) else {
        return;
    };
    let steps = r#"[{"kind": "reply", "tool_calls": [{"name": "read_file"}], "stop": "tool_use"},
        {"kind": "reply", "text": "Fine.", "stop": "end_turn"}]"#;
    let (server, _dir) = start(script(steps), "gemini-sdk-drop");
    let summary = python_sdk_support::run_loop(
        &python,
        SCRIPT,
        &[&server.base_url(), "--drop-response"],
        &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
    );
    assert_eq!(summary["dropped"], true, "{summary}");
    assert_eq!(summary["finished"], false, "{summary}");
    let refused = summary["refused"].as_str().unwrap_or_default();
    assert!(
        refused
            .starts_with("400 INVALID_ARGUMENT: contents[1]: parts[0].functionCall \"read_file\"")
            && refused.ends_with("(rule responses_answer_calls)"),
        "{summary}"
    );
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts[0].is_clean(), "{:#?}", verdicts[0].lines());
    let second: Vec<String> = verdicts[1].lines();
    let named: Vec<&turnsim::testing::serve::verdict::Violation> = verdicts[1]
        .violations
        .iter()
        .filter(|v| v.kind == "unanswered_call")
        .collect();
    assert_eq!(named.len(), 1, "{second:#?}");
    assert_eq!(named[0].rule, "pairing");
    assert_eq!(named[0].message, Some(1), "the model turn with the call");
    assert!(
        named[0].detail.contains("\"read_file\"")
            && named[0].detail.contains("responses_answer_calls"),
        "{}",
        named[0].detail
    );
}
