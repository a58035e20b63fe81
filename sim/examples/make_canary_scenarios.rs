//! Writes the shrunk failure of the named canaries into `scenarios/`, exactly as
//! `make_scenarios` writes every canary's, without regenerating the other files:
//! `cargo run --release -p turnsim --example make_canary_scenarios -- scenarios NAME…`.
//! Each file stores its decisions and trace digest, so `cargo test` replays it exactly.

use std::path::PathBuf;
use turnsim::canary::{Bug, Canary};
use turnsim::options::SimOptions;
use turnsim::runner::{run_scenario, run_seed};
use turnsim::scenario::{Expectation, Scenario, save_scenario};
use turnsim::shrink::shrink;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "scenarios".into()));
    for name in args {
        let bug = Bug::parse(&name).unwrap_or_else(|| panic!("no canary named {name:?}"));
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
        let o = run_scenario(&factory, &s, true);
        s.trace_digest = Some(o.digest.clone());
        s.excerpt = o.trace[o.trace.len().saturating_sub(8)..].join("\n");
        let path = dir.join(format!("canary-{name}.json"));
        save_scenario(&path, &s).unwrap_or_else(|e| panic!("{e}"));
        println!("wrote {} ({} steps)", path.display(), o.steps);
    }
}
