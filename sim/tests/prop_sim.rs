//! Property suite for the whole simulator on the reference engine.
//!
//! Guarantee kept: whatever decision list proptest generates (faults firing often or
//! never, clamped out-of-range choices, a list cut short), with the options of any seed,
//! a run on the reference engine reaches its end with every invariant holding
//! (`outcome.violation == None`, which includes liveness: the open turn ends and one more
//! prompt gets an answer), and replaying the decisions the run used reproduces it
//! exactly. Why: the seeds `turnsim run` walks cover only the choices a seeded generator
//! makes; a shrinker and the fuzz target feed edited lists, and the reference engine must
//! pass those too, or a "failure" found by shrinking would be the harness's and not the
//! engine's. A failure prints the scenario as JSON, ready for `turnsim replay`.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use turnsim::Reference;
use turnsim::SimOptions;
use turnsim::run_scenario;
use turnsim::{Expectation, Scenario, scenario_to_json};

/// A whole run costs what hundreds of unit cases do, so this suite runs 64 cases by
/// default rather than proptest's 256. `PROPTEST_CASES`, when set, overrides it as it
/// does every suite's count (proptest applies the variable over this config).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_sim.txt"
        )))),
        ..ProptestConfig::default()
    }
}

/// A decision list: mostly the uneventful outcome 0, often small outcomes, sometimes
/// any `u32` (clamped by the run to the largest choice). Past its end every draw is 0.
/// Never empty: in a scenario an empty list means "the seed's own draws".
fn decision_list() -> impl Strategy<Value = Vec<u32>> {
    vec(
        prop_oneof![6 => Just(0u32), 3 => 1..8u32, 1 => any::<u32>()],
        1..1500,
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_decision_list_runs_to_completion_with_every_invariant_holding(
        seed in any::<u64>(),
        decisions in decision_list(),
    ) {
        let mut scenario = Scenario::new(SimOptions::from_seed(seed), Expectation::Pass);
        scenario.decisions = decisions;
        let outcome = run_scenario(&Reference, &scenario, false);
        if let Some(v) = &outcome.violation {
            let mut failed = scenario.clone();
            failed.decisions = outcome.decisions.clone();
            failed.expect = Expectation::Fail { invariant: v.invariant, step: v.step };
            return Err(TestCaseError::fail(format!(
                "{} at step {}: {}\nscenario:\n{}",
                v.invariant,
                v.step,
                v.message,
                scenario_to_json(&failed).unwrap_or_default()
            )));
        }
        prop_assert!(outcome.steps > 0, "the run took no step");
        prop_assert!(
            outcome.checks.values().sum::<u64>() > 0,
            "no invariant was checked"
        );

        let mut again = scenario.clone();
        again.decisions = outcome.decisions.clone();
        let replayed = run_scenario(&Reference, &again, false);
        prop_assert_eq!(&replayed.digest, &outcome.digest, "the replay diverged");
        prop_assert_eq!(replayed.steps, outcome.steps);
    }
}
