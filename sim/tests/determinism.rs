//! Same seed, same run: across repeated runs and across job counts.

use turnsim::Reference;
use turnsim::{Batch, check_determinism, run_batch, run_seed};

fn batch(jobs: usize) -> (turnsim::Summary, Vec<(u64, String)>) {
    run_batch(&Batch {
        factory: &Reference,
        seeds: (0..400).collect(),
        jobs,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the pool starts")
}

#[test]
fn one_and_two_jobs_give_the_same_per_seed_digests_and_summary() {
    let (s1, d1) = batch(1);
    let (s2, d2) = batch(2);
    assert_eq!(d1, d2);
    assert_eq!(s1.digest, s2.digest);
    assert_eq!(s1.seeds, 400);
    assert_eq!((s1.steps, s1.events), (s2.steps, s2.events));
    assert_eq!(s1.faults, s2.faults);
    assert_eq!(s1.checks, s2.checks);
    assert_eq!(s1.coverage, s2.coverage);
}

#[test]
fn a_seed_run_twice_has_the_same_digest_at_every_step() {
    for seed in [0, 7, 123, 9_999] {
        let a = run_seed(&Reference, seed, false);
        let b = run_seed(&Reference, seed, false);
        assert_eq!(a.digest, b.digest, "seed {seed}");
        assert_eq!(a.step_digests, b.step_digests, "seed {seed}");
        assert_eq!(a.decisions, b.decisions, "seed {seed}");
        assert_eq!(check_determinism(&Reference, &a), None, "seed {seed}");
    }
}

#[test]
fn replaying_a_seeds_decisions_reproduces_its_digest() {
    for seed in [3, 42, 777] {
        let first = run_seed(&Reference, seed, false);
        let replayed = turnsim::testing::world::run(turnsim::testing::world::RunSpec {
            factory: &Reference,
            options: turnsim::SimOptions::from_seed(seed),
            decisions: Some(first.decisions.clone()),
            script: Vec::new(),
            trace: false,
            record_calls: false,
            unmasked_checks: false,
        });
        assert_eq!(replayed.digest, first.digest, "seed {seed}");
        assert_eq!(replayed.steps, first.steps, "seed {seed}");
    }
}

#[test]
fn different_seeds_give_different_digests() {
    let a = run_seed(&Reference, 1, false);
    let b = run_seed(&Reference, 2, false);
    assert_ne!(a.digest, b.digest);
}
