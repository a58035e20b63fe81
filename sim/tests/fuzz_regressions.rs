//! Replays every committed fuzz input of the simulator's targets (`fuzz/seeds/<target>`
//! and `fuzz/regressions/<target>`) through the same bodies the fuzz targets run, and
//! checks that a `sim_decisions` find becomes a scenario file that replays.
//!
//! Guarantee: a crash the fuzzer found, once fixed and saved as a regression input,
//! is re-checked by a plain stable `cargo test` through exactly the code libFuzzer
//! ran; and what `sim_decisions` writes on a failure is a scenario `turnsim replay`
//! reproduces, violation, step and trace digest alike.

use std::panic::catch_unwind;
use std::path::{Path, PathBuf};
use turnsim::cli::factory;
use turnsim::fuzz_bodies;
use turnsim::{Bug, Canary};
use turnsim::{Expectation, load_scenario};
use turnsim::{matches_expectation, run_scenario};
use turnsim_core::fuzz_replay;

fn replay(target: &str, body: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    fuzz_replay::replay(&fuzz, target, body);
}

#[test]
fn scenario_parse_inputs() {
    replay("scenario_parse", fuzz_bodies::scenario_parse);
}

#[test]
fn transcript_parse_inputs() {
    replay("transcript_parse", fuzz_bodies::transcript_parse);
}

#[test]
fn sim_decisions_inputs() {
    replay("sim_decisions", |data| {
        fuzz_bodies::sim_decisions(data);
    });
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(s) => *s,
        Err(panic) => panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

/// A planted bug (the canary that appends a marker twice) fails seed 1 with no
/// decisions of its own; the body must write a scenario that replays to the same
/// violation and trace, and print the replay command.
#[test]
fn a_find_is_written_as_a_scenario_that_replays() {
    let data = 1u64.to_le_bytes();
    let panic = catch_unwind(|| {
        fuzz_bodies::sim_decisions_on(&Canary(Bug::MarkerTwice), &data);
    })
    .expect_err("the canary fails seed 1");
    let message = panic_message(panic);
    assert!(message.contains("marker_once"), "{message}");
    let path = message
        .lines()
        .find_map(|l| l.strip_prefix("scenario: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no scenario path in {message:?}"));
    let replay_line = format!("replay:   turnsim replay {}", path.display());
    assert!(message.contains(&replay_line), "{message}");

    let scenario = load_scenario(&path).expect("the scenario loads");
    std::fs::remove_file(&path).expect("the scenario file is removed");
    assert_eq!(scenario.engine, "marker_twice");
    assert!(matches!(
        &scenario.expect,
        Expectation::Fail { invariant, .. } if invariant == "marker_once"
    ));
    let engine = factory(&scenario.engine).expect("the canary engine is known");
    let outcome = run_scenario(&*engine, &scenario, false);
    matches_expectation(&scenario.expect, &outcome).expect("the replay reproduces the find");
    assert_eq!(
        scenario.trace_digest.as_deref(),
        Some(outcome.digest.as_str())
    );
}
