//! `turnsim drive` against the in-repo test client: the clean client passes every
//! checker under SIGINT and SIGKILL, and each planted fault is found by the checker
//! it breaks and reproduced by `turnsim drive --replay`.

mod drive_support;

use drive_support::*;
use std::process::Command;
use turnsim::drive::observe::Status;
use turnsim::drive::profiles::Interrupt;

fn replay(report: &turnsim::drive::report::RunReport) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["drive", "--rerun", "0", "--out"])
        .arg(temp_dir("replay"))
        .arg("--replay")
        .arg(report.dir.join("run.json"))
        .output()
        .expect("turnsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_clean_test_client_passes_under_sigint_and_sigkill() {
    let p = test_client(&[]);
    for want in [Interrupt::Sigint, Interrupt::Sigkill] {
        let r = drive(&p, seed_with(&p, want), "clean");
        assert!(r.failing().is_empty(), "{}", r.text());
        assert!(r.signal_sent.is_some(), "{}", r.text());
        if want == Interrupt::Sigint {
            assert_eq!(
                status(&r, "interruption_visible"),
                Status::Pass,
                "{}",
                r.text()
            );
        }
        assert_eq!(
            status(&r, "no_lost_observation"),
            Status::Pass,
            "{}",
            r.text()
        );
    }
}

#[test]
fn a_forgotten_result_after_sigint_is_found_and_replayed() {
    let p = test_client(&["--forget-result-after-sigint"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "forget");
    let failing = r.failing();
    assert!(
        failing.contains(&"interruption_visible".to_owned()),
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
    assert!(out.contains("FAIL interruption_visible"), "{out}");
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
