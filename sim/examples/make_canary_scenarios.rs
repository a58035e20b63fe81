//! Writes the scenarios of the named canaries and invariants into `scenarios/`,
//! exactly as `make_scenarios` writes them, without regenerating the other files:
//! `cargo run --release -p turnsim --example make_canary_scenarios -- scenarios NAME…`
//! (a canary's name writes its shrunk failure, an invariant's name the seed in
//! 0..20000 that checks it most, expecting a pass).
//! Each file stores its decisions and trace digest, so `cargo test` replays it exactly.

use std::path::PathBuf;
use turnsim::SimOptions;
use turnsim::shrink;
use turnsim::testing::checkers::Invariant;
use turnsim::{Bug, Canary};
use turnsim::{EngineFactory, Reference};
use turnsim::{Expectation, Scenario, save_scenario};
use turnsim::{run_scenario, run_seed};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "scenarios".into()));
    let mut outcomes = Vec::new();
    for name in args {
        if let Ok(inv) = name.parse::<Invariant>() {
            if outcomes.is_empty() {
                outcomes = (0..20_000u64)
                    .map(|seed| run_seed(&Reference, seed, false))
                    .filter(|o| o.violation.is_none())
                    .collect();
            }
            let best = outcomes
                .iter()
                .max_by_key(|o| {
                    (
                        o.checks.get(inv.name()).copied().unwrap_or(0),
                        o.faults.values().sum::<u64>(),
                    )
                })
                .expect("a passing seed");
            let n = best.checks.get(inv.name()).copied().unwrap_or(0);
            let mut s = Scenario::new(SimOptions::from_seed(best.seed), Expectation::Pass);
            s.seed = best.seed;
            s.name = format!("invariant {inv}");
            s.description = format!(
                "The seed in 0..20000 whose run checks `{inv}` most often ({n} checks); the reference engine passes it. Replaying it also pins its trace digest (determinism)."
            );
            finish(&Reference, s, &dir, &format!("invariant-{inv}.json"));
            continue;
        }
        let bug = Bug::parse(&name).unwrap_or_else(|| panic!("no canary or invariant {name:?}"));
        let factory = Canary(bug);
        let Some(first) = (0..500u64)
            .map(|seed| run_seed(&factory, seed, false))
            .find(|o| o.violation.is_some())
        else {
            panic!("canary {name} not found in 500 seeds");
        };
        let mut s = Scenario::new(SimOptions::from_seed(first.seed), Expectation::Pass);
        s.seed = first.seed;
        s.name = format!("canary {name}");
        s.engine = name.clone();
        s.decisions = first.decisions.clone();
        if let Some(v) = &first.violation {
            s.expect = Expectation::Fail {
                invariant: v.invariant,
                step: v.step,
            };
        }
        let shrunk = shrink(&factory, &s, 4000).unwrap_or_else(|e| panic!("{e}"));
        let mut s = shrunk.scenario;
        s.description = format!(
            "The reference engine with a planted bug ({name}), found by `{}`; shrunk from {} to {} decisions.",
            bug.caught_by(),
            shrunk.decisions_before,
            shrunk.decisions_after
        );
        finish(&factory, s, &dir, &format!("canary-{name}.json"));
    }
}

fn finish(factory: &dyn EngineFactory, mut s: Scenario, dir: &std::path::Path, file: &str) {
    let o = run_scenario(factory, &s, true);
    if s.decisions.is_empty() {
        s.decisions = o.decisions.clone();
    }
    s.trace_digest = Some(o.digest.clone());
    s.excerpt = o.trace[o.trace.len().saturating_sub(8)..].join("\n");
    let path = dir.join(file);
    save_scenario(&path, &s).unwrap_or_else(|e| panic!("{e}"));
    println!("wrote {} ({} steps)", path.display(), o.steps);
}
