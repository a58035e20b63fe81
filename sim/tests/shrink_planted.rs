//! The shrinker on planted bugs of many classes: every failure shrinks to a handful of
//! steps, fails exactly as the shrunk file reports, and shrinks the same way twice.
//! Each bug is shrunk from its first failing seed, or, when that one cannot get under
//! 20 steps, from the next of its first five failing seeds that does (the table names
//! the seeds passed over): a seed whose only tool call comes in the quiet phase after
//! five turns without one keeps those turns, as the shrinker only makes draws smaller.
//! `cargo test --release --test all shrink_planted:: -- --nocapture` prints the table quoted
//! in docs/shrinking.md.

use crate::flawed_support;
use crate::shrink_support;

use std::time::{Duration, Instant};

use flawed_support::Factory;
use shrink_support::{Planted, failures, first_failure};
use turnsim::scenario_to_json;
use turnsim::{Budget, shrink_with};
use turnsim::{matches_expectation, run_scenario};

const SEEDS: u64 = 3000;
const REPLAYS: u32 = 20_000;
/// The replays one planted bug's shrink may take (the slowest, `CompactionNotPersisted`,
/// takes about 1,500).
const MAX_REPLAYS_EACH: u32 = 5_000;

#[test]
fn planted_bugs_shrink_to_a_median_of_at_most_12_steps_and_at_most_20_each() {
    let mut after = Vec::new();
    let mut missed = Vec::new();
    println!("| bug | invariant | steps before | steps after | replays | time |");
    println!("|---|---|---|---|---|---|");
    for bug in Planted::ALL {
        let factory = Factory(bug);
        let mut passed_over = Vec::new();
        let mut found = None;
        for scenario in failures(&factory, 0..SEEDS).take(5) {
            let started = Instant::now();
            let shrunk = shrink_with(&factory, &scenario, Budget::replays(REPLAYS))
                .expect("a failing scenario shrinks");
            let took = started.elapsed();
            if shrunk.steps_after <= 20 {
                found = Some((scenario, shrunk, took));
                break;
            }
            passed_over.push(format!(
                "seed {}: {} steps",
                scenario.seed, shrunk.steps_after
            ));
        }
        let Some((scenario, shrunk, took)) = found else {
            if passed_over.is_empty() {
                missed.push(bug);
                continue;
            }
            panic!(
                "{bug:?}: none of its first five failing seeds shrinks to 20 steps: {passed_over:?}"
            );
        };
        let out = run_scenario(&factory, &shrunk.scenario, true);
        if std::env::var_os("SHRINK_STORIES").is_some() {
            println!(
                "{}",
                turnsim::testing::shrink::story::story(&out).join("\n")
            );
        }
        matches_expectation(&shrunk.scenario.expect, &out)
            .unwrap_or_else(|e| panic!("{bug:?}: the shrunk file does not fail as it says: {e}"));
        let invariant = out.violation.as_ref().map(|v| v.invariant.to_string());
        println!(
            "| {bug:?} (seed {}{}) | {} | {} | {} | {} | {:.2} s |",
            scenario.seed,
            if passed_over.is_empty() {
                String::new()
            } else {
                format!("; passed over {}", passed_over.join(", "))
            },
            invariant.unwrap_or_default(),
            shrunk.steps_before,
            shrunk.steps_after,
            shrunk.runs,
            took.as_secs_f64()
        );
        // Held to replays, not to the clock: a time limit in a test fails on a loaded
        // machine and passes on a fast one whatever the shrinker does.
        assert!(
            shrunk.runs <= MAX_REPLAYS_EACH,
            "{bug:?} took {} replays",
            shrunk.runs
        );
        after.push((shrunk.steps_after, bug));
    }
    assert!(
        after.len() >= 10,
        "only {} planted bugs were found; missed {missed:?}",
        after.len()
    );
    after.sort();
    let median = after[after.len() / 2].0;
    let worst = after[after.len() - 1];
    println!(
        "median {median} steps, worst {} ({:?}); not found in {SEEDS} seeds: {missed:?}",
        worst.0, worst.1
    );
    assert!(median <= 12, "median {median}: {after:?}");
    assert!(worst.0 <= 20, "worst {worst:?}");
}

#[test]
fn shrinking_the_same_input_twice_gives_byte_identical_output() {
    for bug in [Planted::RestoreDropsLastByte, Planted::DispatchDuplicated] {
        let factory = Factory(bug);
        let scenario = first_failure(&factory, SEEDS).expect("the bug is found");
        let one = shrink_with(&factory, &scenario, Budget::replays(REPLAYS)).expect("shrinks");
        let two = shrink_with(&factory, &scenario, Budget::replays(REPLAYS)).expect("shrinks");
        assert_eq!(
            scenario_to_json(&one.scenario).expect("serialises"),
            scenario_to_json(&two.scenario).expect("serialises")
        );
        assert_eq!(one.runs, two.runs);
    }
}

#[test]
fn a_small_replay_budget_stops_early_and_still_fails_as_reported() {
    let factory = Factory(Planted::ToolResultNotPersisted);
    let scenario = first_failure(&factory, SEEDS).expect("the bug is found");
    let shrunk = shrink_with(&factory, &scenario, Budget::replays(5)).expect("shrinks");
    assert_eq!(shrunk.runs, 5);
    assert!(shrunk.stopped_by_replays);
    assert!(!shrunk.stopped_by_time);
    let out = run_scenario(&factory, &shrunk.scenario, false);
    assert_eq!(matches_expectation(&shrunk.scenario.expect, &out), Ok(()));
}

#[test]
fn a_spent_time_budget_says_so_and_returns_the_input_unshrunk_but_failing() {
    let factory = Factory(Planted::DispatchDuplicated);
    let scenario = first_failure(&factory, SEEDS).expect("the bug is found");
    let budget = Budget {
        replays: REPLAYS,
        time: Some(Duration::ZERO),
    };
    let shrunk = shrink_with(&factory, &scenario, budget).expect("shrinks");
    assert!(shrunk.stopped_by_time);
    assert_eq!(shrunk.runs, 1);
    assert_eq!(shrunk.steps_after, shrunk.steps_before);
    let out = run_scenario(&factory, &shrunk.scenario, false);
    assert_eq!(matches_expectation(&shrunk.scenario.expect, &out), Ok(()));
}
