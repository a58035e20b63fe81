//! The reproduction script a failing run writes (`repro.py`, no turnsim needed) for
//! clients that speak the Gemini API: it answers `…:generateContent` in Gemini's own
//! framing (a call without an id, as Google's API sends it), reads the resumed
//! `contents` by the ledger id each call's command carries, and so reproduces a
//! finding of a Gemini client and nothing a clean client does. Checked against the
//! in-repo test client in `--api gemini` (JSON replies; gemini-cli itself, which
//! streams, is driven by hand: docs/real-clients-gemini.md).

use crate::drive_support;

use drive_support::*;
use std::path::Path;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::Interrupt;
use turnsim::testing::drive::report::Outcome;

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

#[test]
fn repro_answers_the_gemini_api_and_tells_a_dropped_call_from_a_kept_one() {
    let p = test_client(&["--api", "gemini", "--drop-started-call"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "gemini-drop");
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.text());
    assert_eq!(
        status(&r, "started_call_represented"),
        Status::Fail,
        "{}",
        r.text()
    );
    // Every request went to the Gemini route (and was judged there).
    let records = std::fs::read_dir(r.dir.join("record")).expect("record dir");
    let mut n = 0;
    for e in records {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.expect("entry").path()).expect("record"))
                .expect("record JSON");
        assert_eq!(
            v["target"],
            "/v1beta/models/gemini-2.5-pro:generateContent",
            "{}",
            r.text()
        );
        n += 1;
    }
    assert!(n >= 2, "{}", r.text());
    assert_eq!(status(&r, "verdicts_clean"), Status::Pass, "{}", r.text());
    let script = r.dir.join("repro.py");
    let (code, out) = run_repro(&script, |s| s);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "REPRODUCED started_call_represented: the resumed request has no tool_result for toolu_"
        ),
        "{out}"
    );
    // The planted fault taken out: the client answers the interrupted call with a
    // functionResponse, and the script must find it by the call's ledger id.
    let (code, out) = run_repro(&script, |s| {
        assert!(s.contains(r#""--drop-started-call","#), "{s}");
        s.replace(r#""--drop-started-call","#, "")
    });
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("REPRODUCED"), "{out}");
    assert!(out.contains("SIGTERM sent"), "{out}");
}
