//! `turnsim drive --client python-sdk`: the repository's Anthropic SDK loop, cancelled
//! with SIGINT while a tool runs and resumed from its saved `message_history`, sends
//! valid requests, marks the interruption and keeps its observations. Skipped (with
//! the reason printed) where `python3 -c "import anthropic"` fails.

mod drive_support;

use drive_support::*;
use std::process::Command;
use turnsim::drive::observe::Status;
use turnsim::drive::profiles::{Interrupt, profile};

#[test]
fn the_python_sdk_loop_survives_a_sigint_and_resumes() {
    match Command::new("python3")
        .args(["-c", "import anthropic"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            println!(
                "SKIPPED: the anthropic Python SDK is not installed ({}); pip install anthropic",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            println!("SKIPPED: python3: {e}");
            return;
        }
    }
    let p = profile("python-sdk", &[]).expect("built-in profile");
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "python");
    for name in [
        "verdicts_clean",
        "no_hang",
        "at_most_once",
        "no_effect_after_cancel",
        "no_lost_observation",
        "interruption_visible",
    ] {
        assert_eq!(status(&r, name), Status::Pass, "{name}\n{}", r.text());
    }
}
