//! The official Anthropic Python SDK, unmodified, runs a full tool loop offline
//! against `turnsim serve`, through its own retries of a 529 and a 429, and every
//! request it sends gets a clean verdict.
//!
//! Needs the SDK, so it is `#[ignore]`d: a plain `cargo test` lists it as ignored with
//! the reason. Run it with `-- --ignored`; `$TURNSIM_PYTHON` names the interpreter
//! (`.ci/run` exports the one of its virtual environment), see `python_sdk_support`.

use crate::python_sdk_support;
use crate::serve_support;

use serve_support::*;
use turnsim::testing::serve::tools::{LedgerLine, read_ledger};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/sdk_tool_loop.py");

#[test]
#[ignore = "needs the anthropic Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn the_python_sdk_completes_a_tool_loop_offline_with_clean_verdicts() {
    let Some(python) = python_sdk_support::interpreter_with(
        "anthropic",
        "the_python_sdk_completes_a_tool_loop_offline_with_clean_verdicts",
    ) else {
        return;
    };
    let rec = temp_dir("sdk-record");
    let (server, dir) = start_with(
        script(
            r#"[{"kind": "status", "status": 529},
                {"kind": "reply", "text": "Running the checks.", "tool_calls": [{"name": "bash"}, {"name": "bash"}], "stop": "tool_use"},
                {"kind": "status", "status": 429, "retry_after": 1},
                {"kind": "reply", "tool_calls": [{"name": "read_file"}], "stop": "tool_use"},
                {"kind": "reply", "text": "All checks ran.", "stop": "end_turn"}]"#,
        ),
        "sdk",
        |c| c.record = Some(rec.clone()),
    );
    let summary = python_sdk_support::run_loop(
        &python,
        SCRIPT,
        &[&server.base_url()],
        &["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
    );
    assert_eq!(summary["stop_reason"], "end_turn");
    assert_eq!(summary["tool_calls"], 3);
    assert_eq!(
        summary["requests"], 3,
        "the SDK's retries are invisible to the loop"
    );
    assert_eq!(server.server.steps_left(), 0);

    let records = server.server.records();
    assert_eq!(records.len(), 5, "three requests and two retries");
    let statuses: Vec<u16> = records.iter().map(|r| r.answer.status).collect();
    assert_eq!(statuses, [529, 200, 429, 200, 200]);
    assert!(
        records
            .iter()
            .all(|r| r.headers.contains_key("x-stainless-retry-count"))
    );
    assert!(records.iter().any(|r| r.answer.stream) && records.iter().any(|r| !r.answer.stream));
    let verdicts = server.server.verdicts();
    assert!(
        violations(&verdicts).is_empty(),
        "{:?}",
        violations(&verdicts)
    );
    let notes: Vec<String> = verdicts.iter().flat_map(|v| v.notes.clone()).collect();
    assert!(notes.iter().any(|n| n.starts_with("retry 1")), "{notes:?}");

    // The SDK ran the two shell calls: both are in the ledger, started and finished.
    let ids = &records[1].answer.tool_use_ids;
    assert_eq!(ids.len(), 2);
    let ledger = read_ledger(&dir.join("ledger"));
    for id in ids {
        assert!(
            ledger.contains(&LedgerLine::Start(id.clone())),
            "{ledger:?}"
        );
        assert!(
            ledger.contains(&LedgerLine::Finish(id.clone())),
            "{ledger:?}"
        );
    }
    // And the recording on disk judges the same.
    let checked = turnsim::testing::serve::recheck::check_dir(&rec).expect("recording");
    assert_eq!(checked.verdicts.len(), 5);
    assert!(checked.verdicts.iter().all(|v| v.is_clean()));
    assert!(checked.mismatches.is_empty());
}
