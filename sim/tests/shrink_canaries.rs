//! Every canary of `canary::Bug::ALL` shrinks to at most 12 steps (`Bug::shrink_bound`,
//! where a floor the event model forces would be stated), both from its pinned
//! scenario (`scenarios/canary-*.json`) and from its first failing seed, whatever
//! checker saw it (what `turnsim run --engine NAME` then `turnsim shrink` give a
//! user); and the shrunk scenario fails exactly as it reports.
//!
//! Why a replay budget and no clock: the result of a shrink is a function of its input
//! and its replay budget alone, so the test gives the same figures on any machine at
//! any load; a time budget would make it flaky. The budget is the CLI's default
//! (`Budget::DEFAULT_REPLAYS`), so the figures are the CLI's whenever its time budget
//! does not run out first.
//! `cargo test --release --test all shrink_canaries:: -- --nocapture` prints the tables
//! quoted in docs/shrinking.md and docs/invariants.md.

use turnsim::load_scenario;
use turnsim::testing::shrink::story;
use turnsim::{Budget, shrink_with};
use turnsim::{Bug, Canary, Expectation, Scenario, SimOptions, run_seed};
use turnsim::{matches_expectation, run_scenario};

#[test]
fn every_canary_shrinks_to_at_most_12_steps() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut over = Vec::new();
    println!("| canary | invariant | steps before | steps after | replays |");
    println!("|---|---|---|---|---|");
    for bug in Bug::ALL {
        let path = dir.join(format!("canary-{}.json", bug.name()));
        let scenario = load_scenario(&path)
            .unwrap_or_else(|e| panic!("{}: the canary scenario loads: {e}", path.display()));
        let factory = turnsim::cli::factory(&scenario.engine).expect("a canary engine");
        let shrunk = shrink_with(&*factory, &scenario, Budget::replays(20_000)).expect("shrinks");
        let out = run_scenario(&*factory, &shrunk.scenario, true);
        assert_eq!(
            matches_expectation(&shrunk.scenario.expect, &out),
            Ok(()),
            "{}",
            bug.name()
        );
        let invariant = out.violation.as_ref().map(|v| v.invariant.to_string());
        println!(
            "| {} | {} | {} | {} | {} |",
            bug.name(),
            invariant.unwrap_or_default(),
            shrunk.steps_before,
            shrunk.steps_after,
            shrunk.runs
        );
        if std::env::var_os("SHRINK_STORIES").is_some() {
            println!("{}", story::story(&out).join("\n"));
        }
        let bound = bug.shrink_bound();
        if shrunk.steps_after > bound {
            over.push(format!(
                "{}: {} -> {} steps:\n{}",
                bug.name(),
                shrunk.steps_before,
                shrunk.steps_after,
                story::story(&out).join("\n")
            ));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n\n"));
}

/// Seeds searched for a canary's first failure, as `scripts/canary-shrink-table.sh`
/// and issue 25 ("a default `turnsim run` finds within 10,000 seeds") do.
const SEEDS: u64 = 10_000;

#[test]
fn every_canary_shrinks_from_its_first_failing_seed_to_at_most_12_steps() {
    let mut over = Vec::new();
    println!("| canary | first seed | checker | steps before | steps after shrink | replays |");
    println!("|---|---|---|---|---|---|");
    for bug in Bug::ALL {
        let factory = Canary(bug);
        let first = (0..SEEDS)
            .map(|seed| run_seed(&factory, seed, false))
            .find(|o| o.violation.is_some())
            .unwrap_or_else(|| panic!("{}: no failing seed in 0..{SEEDS}", bug.name()));
        let v = first.violation.as_ref().expect("a failing seed");
        // The scenario `turnsim run` saves for the seed (`cli::failures`).
        let mut s = Scenario::new(
            SimOptions::from_seed(first.seed),
            Expectation::Fail {
                invariant: v.invariant,
                step: v.step,
            },
        );
        s.seed = first.seed;
        s.engine = bug.name().into();
        s.decisions = first.decisions.clone();
        let shrunk = shrink_with(&factory, &s, Budget::replays(Budget::DEFAULT_REPLAYS))
            .unwrap_or_else(|e| panic!("{}: {e}", bug.name()));
        let out = run_scenario(&factory, &shrunk.scenario, true);
        assert_eq!(
            matches_expectation(&shrunk.scenario.expect, &out),
            Ok(()),
            "{}",
            bug.name()
        );
        println!(
            "| `{}` | {} | `{}` | {} | {} | {} |",
            bug.name(),
            first.seed,
            v.invariant,
            shrunk.steps_before,
            shrunk.steps_after,
            shrunk.runs
        );
        if shrunk.steps_after > bug.shrink_bound() {
            over.push(format!(
                "{} (seed {}): {} -> {} steps, bound {}:\n{}",
                bug.name(),
                first.seed,
                shrunk.steps_before,
                shrunk.steps_after,
                bug.shrink_bound(),
                story::story(&out).join("\n")
            ));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n\n"));
}
