//! `turnsim drive --client python-sdk`: the repository's Anthropic SDK loop, cancelled
//! with SIGINT while a tool runs and resumed from its saved `message_history`, sends
//! valid requests, records the interrupted call and keeps its observations.
//!
//! Needs the SDK, so it is `#[ignore]`d: a plain `cargo test` lists it as ignored with
//! the reason. Run it with `-- --ignored`; `$TURNSIM_PYTHON` names the interpreter
//! (`.ci/run` exports the one of its virtual environment), see `python_sdk_support`.

use crate::drive_support;
use crate::python_sdk_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::{Interrupt, profile};

#[test]
#[ignore = "needs the anthropic Python SDK: run with -- --ignored (TURNSIM_PYTHON names the interpreter; .ci/run does)"]
fn the_python_sdk_loop_survives_a_sigint_and_resumes() {
    let Some(python) = python_sdk_support::interpreter_with(
        "anthropic",
        "the_python_sdk_loop_survives_a_sigint_and_resumes",
    ) else {
        return;
    };
    let mut p = profile("python-sdk", &[]).expect("built-in profile");
    // The profile runs `python3` from PATH; the test runs the interpreter it checked.
    for command in [&mut p.command, &mut p.resume, &mut p.version] {
        assert_eq!(command.first().map(String::as_str), Some("python3"));
        command[0] = python.clone();
    }
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "python");
    for name in [
        "verdicts_clean",
        "no_hang",
        "at_most_once",
        "no_effect_after_cancel",
        "no_lost_observation",
        "started_call_represented",
    ] {
        assert_eq!(status(&r, name), Status::Pass, "{name}\n{}", r.text());
    }
}
