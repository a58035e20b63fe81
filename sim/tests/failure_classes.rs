//! Each failure class is reported as such: an engine that panics, an engine that
//! never ends a turn, and an engine whose runs differ between two tries of one seed.

use crate::flawed_support;

use flawed_support::{Factory, Flaw};
use turnsim::testing::report::{exit, exit_code};
use turnsim::testing::world::FailureClass;
use turnsim::{check_determinism, run_seed};

fn first_failure(
    f: &Factory<Flaw>,
    seeds: std::ops::Range<u64>,
) -> (u64, turnsim::testing::checkers::Violation) {
    for seed in seeds {
        if let Some(v) = run_seed(f, seed, false).violation {
            return (seed, v);
        }
    }
    panic!("no seed failed");
}

#[test]
fn an_engine_panic_is_its_own_failure_class_with_exit_code_4() {
    let (_, v) = first_failure(&Factory(Flaw::Panics), 0..200);
    assert_eq!(v.invariant, "engine_panic");
    assert_eq!(v.message, "the engine panicked: planted panic");
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::ENGINE_PANIC
    );
}

#[test]
fn a_turn_that_never_ends_is_a_liveness_failure_not_a_hung_harness() {
    let (seed, v) = first_failure(&Factory(Flaw::IgnoresCancel), 0..500);
    assert_eq!(v.invariant, "liveness", "seed {seed}: {}", v.message);
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::LIVENESS
    );
}

#[test]
fn a_nondeterministic_engine_is_caught_at_its_first_differing_step() {
    let f = Factory(Flaw::Nondeterministic);
    let first = run_seed(&f, 5, false);
    let v = check_determinism(&f, &first).expect("two runs differ");
    assert_eq!(v.invariant, "determinism");
    assert_eq!(v.step, 1, "{}", v.message);
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::NONDETERMINISM
    );
}
