//! `turnsim drive` against the in-repo test client: the clean client passes every
//! checker under each signal, and each planted fault is found by the checker it
//! breaks, with its evidence, and reproduced by `turnsim drive --replay`.

use crate::drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::Interrupt;
use turnsim::testing::drive::report::Outcome;

#[test]
fn the_clean_test_client_passes_under_every_signal() {
    let p = test_client(&[]);
    for want in [
        Interrupt::Sigint,
        Interrupt::Sigterm,
        Interrupt::Sighup,
        Interrupt::Sigkill,
    ] {
        let r = drive(&p, seed_with(&p, want), "clean");
        assert!(r.failing().is_empty(), "{}", r.text());
        if want == Interrupt::Sigkill && r.outcome == Outcome::Info {
            // Its death signal reaches the tool's `sh -c`, not the script under it:
            // an orphan nothing in a SIGKILLed client could prevent.
            assert_eq!(status(&r, "orphaned_tool"), Status::Info, "{}", r.text());
        } else {
            assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
        }
        assert_eq!(
            r.signal_sent.as_ref().map(|s| s.interrupt),
            Some(want),
            "{}",
            r.text()
        );
        assert_eq!(
            status(&r, "started_call_represented"),
            Status::Pass,
            "{}",
            r.text()
        );
        assert!(r.first.leftovers.is_empty(), "{}", r.text());
    }
}

#[test]
fn a_forgotten_result_after_sigint_is_found_and_replayed() {
    let p = test_client(&["--forget-result-after-sigint"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "forget");
    let failing = r.failing();
    assert!(
        failing.contains(&"started_call_represented".to_owned()),
        "{}",
        r.text()
    );
    assert!(
        failing.contains(&"verdicts_clean".to_owned()),
        "{}",
        r.text()
    );
    let (code, out) = replay(&r);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL started_call_represented"), "{out}");
}

#[test]
fn a_tool_rerun_after_restart_is_found_and_replayed() {
    let p = test_client(&["--rerun-after-restart"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigkill), "rerun");
    assert_eq!(r.failing(), ["at_most_once"], "{}", r.text());
    let (code, out) = replay(&r);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL at_most_once"), "{out}");
}

#[test]
fn a_dropped_started_call_fails_the_structural_check_and_the_kept_reply_rule() {
    let p = test_client(&["--drop-started-call"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "drop");
    // Every request is valid and append-only; what the client changed is the model's
    // own reply (its tool call taken out), which the request judge also sees.
    assert_eq!(
        r.failing(),
        ["verdicts_clean", "started_call_represented"],
        "{}",
        r.text()
    );
    let judged = details(&r, "verdicts_clean");
    assert_eq!(judged.len(), 1, "{}", r.text());
    assert!(
        judged[0].contains("response_kept/reply_changed at message 3"),
        "{}",
        r.text()
    );
    let o = r
        .observations
        .iter()
        .find(|o| o.name == "started_call_represented")
        .expect("checker present");
    assert!(
        o.details[0].contains("holds neither its tool_use nor a tool_result"),
        "{}",
        r.text()
    );
    assert!(o.details[0].contains("exit 143 = 128 + 15"), "{}", r.text());
}

#[test]
fn a_client_that_ignores_sigint_and_keeps_working_fails_no_effect_after_cancel() {
    let p = test_client(&["--ignore-sigint"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "ignore");
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.text());
    let o = r
        .observations
        .iter()
        .find(|o| o.name == "no_effect_after_cancel")
        .expect("checker present");
    assert_eq!(o.status, Status::Fail, "{}", r.text());
    // A record holds the request's place in the order, not its time: the line
    // places it between the signal and the resume, and does not claim it came
    // before the exit (a surviving child can send it later).
    let line = format!(
        "and before the resumed invocation (the first invocation exited at +{} ms)",
        r.first.end_ms
    );
    assert!(
        o.details
            .iter()
            .any(|d| d.contains("sent after SIGINT at +") && d.contains(&line)),
        "{}",
        r.text()
    );
    assert_eq!(r.first.exit_code, Some(0), "{}", r.text());
}

#[test]
fn a_client_that_exits_before_the_signal_is_not_exercised_never_pass() {
    let p = test_client(&["--exit-before-signal"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "early");
    assert_eq!(r.outcome, Outcome::NotExercised, "{}", r.text());
    assert!(r.signal_sent.is_none());
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.starts_with("SIGTERM was scheduled after tool call "),
        "{why}"
    );
    assert!(
        why.contains("the client exited first") && why.contains("exit 1: a generic error"),
        "{why}"
    );
    assert!(r.text().starts_with("NOT EXERCISED "), "{}", r.text());
}

#[test]
fn a_history_saved_only_at_the_end_of_a_turn_loses_the_prompt_and_repro_py_shows_it_without_turnsim()
 {
    let p = test_client(&["--save-at-end"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "save-at-end");
    assert_eq!(
        status(&r, "no_lost_observation"),
        Status::Fail,
        "{}",
        r.text()
    );
    assert!(
        details(&r, "no_lost_observation")
            .iter()
            .any(|d| d == "the resumed request lost the prompt [turnsim-drive prompt 1]"),
        "{}",
        r.text()
    );
    // The script judges every checker the run failed, not only the first one listed.
    let out = std::process::Command::new("python3")
        .arg(r.dir.join("repro.py"))
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "REPRODUCED no_lost_observation: the resumed request lost the prompt [turnsim-drive prompt 1]"
        ),
        "{text}"
    );
}
