//! The reproduction script a failing run writes (`repro.py`, no turnsim needed) for
//! clients that speak OpenAI's formats: it answers `/v1/responses` and
//! `/v1/chat/completions` in their own framing, reads the resumed history in either
//! format, and so reproduces a finding of an OpenAI client and nothing a clean
//! client does. Checked against the in-repo test client in `--api responses` and
//! `--api chat` (JSON replies); the event-stream framing against the `openai` SDK's
//! tool loop (ignored without the SDK, see `python_sdk_support`).

use crate::drive_support;
use crate::python_sdk_support;

use drive_support::*;
use std::path::Path;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::{Interrupt, profile};
use turnsim::testing::drive::report::{Outcome, RunReport};

/// Runs `python3 script` (edited by `edit` first); (exit code, stdout).
fn run_repro(script: &Path, edit: impl Fn(String) -> String) -> (Option<i32>, String) {
    let text = std::fs::read_to_string(script).expect("repro.py written");
    let edited = script.with_file_name("repro-edited.py");
    std::fs::write(&edited, edit(text)).expect("write the edited script");
    let out = std::process::Command::new("python3")
        .arg(&edited)
        .output()
        .expect("python3 runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Every request the run recorded went to `path`.
fn assert_all_requests_to(r: &RunReport, path: &str) {
    let records = std::fs::read_dir(r.dir.join("record")).expect("record dir");
    let mut n = 0;
    for e in records {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.expect("entry").path()).expect("record"))
                .expect("record JSON");
        assert_eq!(v["target"], path, "{}", r.text());
        n += 1;
    }
    assert!(n >= 2, "{}", r.text());
}

#[test]
fn repro_answers_the_responses_api_and_reproduces_a_setsid_orphan() {
    let p = test_client(&["--api", "responses", "--orphan-setsid"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "oa-orphan");
    assert_eq!(status(&r, "orphaned_tool"), Status::Fail, "{}", r.text());
    assert_all_requests_to(&r, "/v1/responses");
    let (code, out) = run_repro(&r.dir.join("repro.py"), |s| s);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("SIGTERM sent"), "{out}");
    assert!(
        out.contains("REPRODUCED orphaned_tool: tool toolu_"),
        "the ledger names the call by its toolu_ id, not call_: {out}"
    );
}

#[test]
fn repro_reads_both_openai_histories_and_tells_a_dropped_call_from_a_kept_one() {
    for (api, path) in [
        ("chat", "/v1/chat/completions"),
        ("responses", "/v1/responses"),
    ] {
        let p = test_client(&["--api", api, "--drop-started-call"]);
        let r = drive(
            &p,
            seed_with(&p, Interrupt::Sigterm),
            &format!("oa-drop-{api}"),
        );
        assert_eq!(r.outcome, Outcome::Fail, "{api}: {}", r.text());
        assert_eq!(
            status(&r, "started_call_represented"),
            Status::Fail,
            "{api}: {}",
            r.text()
        );
        assert_all_requests_to(&r, path);
        let script = r.dir.join("repro.py");
        let (code, out) = run_repro(&script, |s| s);
        assert_eq!(code, Some(1), "{api}: {out}");
        assert!(
            out.contains(
                "REPRODUCED started_call_represented: the resumed request has no tool_result for toolu_"
            ),
            "{api}: {out}"
        );
        // The same script with the planted fault taken out: the client records the
        // interrupted call (a `tool` message, a `function_call_output`), and the
        // script must see it there.
        let (code, out) = run_repro(&script, |s| {
            assert!(s.contains(r#""--drop-started-call","#), "{s}");
            s.replace(r#""--drop-started-call","#, "")
        });
        assert_eq!(code, Some(0), "{api}: {out}");
        assert!(!out.contains("REPRODUCED"), "{api}: {out}");
        assert!(out.contains("SIGTERM sent"), "{api}: {out}");
    }
}

#[test]
#[ignore = "needs the openai Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn repro_streams_both_openai_formats_to_the_sdk_loop_and_reproduces_its_orphan() {
    let Some(python) = python_sdk_support::interpreter_with(
        "openai",
        "repro_streams_both_openai_formats_to_the_sdk_loop_and_reproduces_its_orphan",
    ) else {
        return;
    };
    for api in ["chat", "responses"] {
        let mut p = profile("openai-chat", &[]).expect("built-in profile");
        for command in [&mut p.command, &mut p.resume, &mut p.version] {
            assert_eq!(command.first().map(String::as_str), Some("python3"));
            command[0] = python.clone();
            // The loop alternates streamed and JSON requests: both framings are played.
            for a in command.iter_mut().filter(|a| *a == "chat") {
                *a = api.to_owned();
            }
        }
        let r = drive(&p, seed_with(&p, Interrupt::Sigterm), &format!("sdk-{api}"));
        assert_eq!(
            status(&r, "orphaned_tool"),
            Status::Fail,
            "{api}: {}",
            r.text()
        );
        assert_eq!(
            status(&r, "verdicts_clean"),
            Status::Pass,
            "{api}: {}",
            r.text()
        );
        let (code, out) = run_repro(&r.dir.join("repro.py"), |s| s);
        assert_eq!(code, Some(1), "{api}: {out}");
        assert!(
            out.contains("REPRODUCED orphaned_tool: tool toolu_"),
            "{api}: {out}"
        );
    }
}
