//! Every canary's pinned scenario (`scenarios/canary-*.json`, one per entry of
//! `canary::Bug::ALL`) shrinks to at most 12 steps, save the one whose floor is higher
//! (`Bug::shrink_bound`), and the shrunk file fails exactly as it reports.
//! `cargo test --release --test all shrink_canaries:: -- --nocapture` prints the table quoted
//! in docs/shrinking.md.

use turnsim::Bug;
use turnsim::load_scenario;
use turnsim::testing::shrink::story;
use turnsim::{Budget, shrink_with};
use turnsim::{matches_expectation, run_scenario};

#[test]
fn every_canary_shrinks_to_at_most_12_steps_or_its_stated_floor() {
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
