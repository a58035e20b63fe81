//! Every checker's event mask (`Checker::events`) covers every kind of event it acts
//! on. The runner skips delivering the other kinds, so a mask one kind too narrow
//! would silently stop a checker from seeing what it judges: a missed bug with no
//! signal. This suite runs the same seeds twice, once with the masks and once with
//! every event delivered to every checker (`Checks::unmasked`), and requires the two
//! runs to agree on everything the checks decide: the verdict (invariant, step and
//! message of the first violation), how often each checker checked, and the trace.
//!
//! Why this catches a narrow mask: a kind left out that the checker answers with a
//! check changes its count; a kind left out that only feeds its state (a baseline, a
//! ledger) changes a verdict wherever that state matters, which the failing engines
//! make happen. So the engines are the reference one (every checker counts, none
//! fires) and every canary (the reference engine with one planted bug each, found by
//! the checker it names), each judged once by every checker and once by the canary's
//! own checker alone, so that no earlier checker's verdict stops the run before the
//! one that matters has judged it. The crafted-event suites (`checkers_fire*`) run the
//! same comparison on every event they feed (`checkers_support::Fixture`).

use crate::flawed_support;

use turnsim::Judged;
use turnsim::conventions::{Conventions, Selection};
use turnsim::testing::checkers::Invariant;
use turnsim::testing::world::{RunOutcome, RunSpec, run};
use turnsim::{Bug, Canary, EngineFactory, Reference, SimOptions};

/// Seeds each engine runs: enough for every canary's checker to fire on some of them
/// (asserted below, so the comparison covers failing verdicts, not only passes).
const SEEDS: std::ops::Range<u64> = 0..200;

/// Seeds a canary judged by its own checker alone may take to make that checker fire
/// `FIRES` times: some triggers are rare (`tests/canaries.rs` gives two of them 1,000
/// and 10,000 seeds).
const RARE_SEEDS: u64 = 10_000;
const FIRES: usize = 3;

fn outcome(factory: &dyn EngineFactory, seed: u64, unmasked: bool) -> RunOutcome {
    run(RunSpec {
        factory,
        options: SimOptions::from_seed(seed),
        decisions: None,
        script: Vec::new(),
        trace: false,
        record_calls: false,
        unmasked_checks: unmasked,
    })
}

/// What the checks decided in a run, as one comparable line per item.
fn decided(o: &RunOutcome) -> Vec<String> {
    let mut out = vec![match &o.violation {
        Some(v) => format!("violation {}@{}: {}", v.invariant, v.step, v.message),
        None => "no violation".to_string(),
    }];
    out.extend(
        o.checks
            .iter()
            .map(|(name, n)| format!("{name} checked {n}")),
    );
    out.push(format!("steps {} digest {}", o.steps, o.digest));
    out
}

/// Runs `seeds` of `factory` masked and unmasked, requires the same decisions, and
/// returns the invariants that fired.
fn masked_equals_unmasked(
    what: &str,
    factory: &dyn EngineFactory,
    seeds: std::ops::Range<u64>,
) -> Vec<Invariant> {
    let mut fired = Vec::new();
    for seed in seeds {
        let masked = outcome(factory, seed, false);
        let unmasked = outcome(factory, seed, true);
        assert_eq!(
            decided(&masked),
            decided(&unmasked),
            "{what}, seed {seed}: the masked checks decided otherwise than the unmasked ones"
        );
        fired.extend(masked.violation.map(|v| v.invariant));
    }
    fired
}

fn alone(inv: Invariant) -> Selection {
    Selection {
        only: Some(vec![inv]),
        skip: Vec::new(),
    }
}

#[test]
fn masks_change_nothing_the_checks_decide_on_the_reference_engine() {
    let fired = masked_equals_unmasked("reference", &Reference, SEEDS);
    assert_eq!(fired, Vec::<Invariant>::new());
    let generic = Judged::new(&Reference).conventions(Conventions::generic());
    let fired = masked_equals_unmasked("reference, generic profile", &generic, SEEDS);
    assert_eq!(fired, Vec::<Invariant>::new());
}

#[test]
fn masks_change_nothing_the_checks_decide_on_any_canary() {
    for bug in Bug::ALL {
        let canary = Canary(bug);
        masked_equals_unmasked(bug.name(), &canary, SEEDS);
        let own = Judged::new(&canary).checks(alone(bug.caught_by()));
        let judged = format!("{} judged alone", bug.name());
        let mut fires = 0;
        let mut seed = 0;
        while fires < FIRES && seed < RARE_SEEDS {
            let fired = masked_equals_unmasked(&judged, &own, seed..seed + 1);
            fires += fired.iter().filter(|&&i| i == bug.caught_by()).count();
            seed += 1;
        }
        assert_eq!(
            fires,
            FIRES,
            "{}: its checker {} fired {fires} times in seeds 0..{seed}, too rarely to audit its mask",
            bug.name(),
            bug.caught_by()
        );
    }
}

#[test]
fn masks_change_nothing_the_checks_decide_on_the_flawed_engines() {
    use flawed_support::{Factory, Flaw};
    // `Nondeterministic` is left out: its two runs differ by design.
    for flaw in [Flaw::Panics, Flaw::IgnoresCancel] {
        masked_equals_unmasked(&format!("{flaw:?}"), &Factory(flaw), SEEDS);
    }
}
