//! An engine that differs from the reference only in its conventions passes when
//! judged by its own profile (and by the generic checks alone), fails when held to
//! the reference's profile, and a genuine bug planted in it is still found.

use crate::other_support;

use other_support::OtherFactory;
use turnsim::Engine;
use turnsim::EngineFactory;
use turnsim::Judged;
use turnsim::conventions::{Conventions, Selection};
use turnsim::testing::checkers::Invariant;
use turnsim::{Batch, Summary, run_batch};
use turnsim_core::{Output, SessionConfig};

fn run(factory: &dyn EngineFactory, seeds: std::ops::Range<u64>) -> Summary {
    run_batch(&Batch {
        factory,
        seeds: seeds.collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("worker threads start")
    .0
}

fn failures(s: &Summary) -> Vec<String> {
    s.failures
        .iter()
        .take(3)
        .map(|(seed, v)| {
            format!(
                "seed {seed}: {} at step {}: {}",
                v.invariant, v.step, v.message
            )
        })
        .collect()
}

#[test]
fn an_engine_with_other_conventions_passes_a_thousand_seeds_by_its_own_profile() {
    let s = run(&OtherFactory::correct(), 0..1000);
    assert_eq!(s.seeds, 1000);
    assert!(s.failures.is_empty(), "{:#?}", failures(&s));
    // Every convention checker judged something: the profile is not a blanket pass.
    for name in [
        "marker_once",
        "note_exact",
        "cache_breakpoints",
        "no_lost_observation",
    ] {
        assert!(
            s.checks.get(name).copied().unwrap_or(0) > 1000,
            "{name}: {:?}",
            s.checks
        );
    }
}

#[test]
fn the_same_engine_passes_with_the_generic_checks_alone() {
    let generic = OtherFactory {
        bug: false,
        conventions: Conventions::generic(),
    };
    let s = run(&generic, 0..300);
    assert!(s.failures.is_empty(), "{:#?}", failures(&s));
}

#[test]
fn held_to_the_reference_profile_it_fails_on_conventions_only() {
    let factory = OtherFactory::correct();
    let wrong = Judged::new(&factory).conventions(Conventions::reference());
    let s = run(&wrong, 0..50);
    assert_eq!(s.failures.len(), 50);
    for (_, v) in &s.failures {
        assert!(
            [
                Invariant::NoteExact,
                Invariant::CacheBreakpoints,
                Invariant::MarkerOnce
            ]
            .contains(&v.invariant)
                || v.invariant == Invariant::NoLostObservation,
            "{v:?}"
        );
    }
}

#[test]
fn a_dropped_tool_result_after_cancel_is_found_by_the_generic_pairing_check() {
    let s = run(&OtherFactory::buggy(), 0..400);
    assert!(!s.failures.is_empty(), "the planted bug was not found");
    assert!(
        s.failures
            .iter()
            .all(|(_, v)| v.invariant == Invariant::Pairing),
        "{:#?}",
        failures(&s)
    );
    // Found with its conventions unknown, too: pairing is generic.
    let generic = OtherFactory {
        bug: true,
        conventions: Conventions::generic(),
    };
    let g = run(&generic, 0..400);
    assert_eq!(
        g.failures.iter().map(|(seed, _)| *seed).collect::<Vec<_>>(),
        s.failures.iter().map(|(seed, _)| *seed).collect::<Vec<_>>()
    );
}

#[test]
fn a_skipped_checker_does_not_run_and_is_not_counted() {
    let factory = OtherFactory::buggy();
    let skip = Judged::new(&factory).checks(Selection {
        only: None,
        skip: vec![Invariant::Pairing],
    });
    let s = run(&skip, 0..100);
    assert!(!s.checks.contains_key("pairing"), "{:?}", s.checks);
    assert!(
        s.failures
            .iter()
            .all(|(_, v)| v.invariant != Invariant::Pairing)
    );
}

#[test]
fn log_borne_hostile_inputs_are_not_applicable_to_an_engine_with_its_own_log() {
    let log_borne = [
        "summary_leaves_call",
        "orphan_result",
        "legacy_abort_context",
        "invalid_import",
    ];
    let own = run(&OwnLog(OtherFactory::correct()), 0..3000);
    let skipped: u64 = own.hostile_not_applicable.values().sum();
    assert!(skipped > 0, "{:?}", own.hostile_not_applicable);
    for kind in log_borne {
        assert_eq!(own.hostile.get(kind), None, "{kind} was handed");
    }
    let reference = run(&turnsim::Reference, 0..3000);
    assert!(reference.hostile_not_applicable.is_empty());
    assert!(log_borne.iter().all(|k| reference.hostile.contains_key(k)));
}

/// The same engine declaring a log of its own format (the default of the trait).
pub struct OwnLog(pub OtherFactory);

impl EngineFactory for OwnLog {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        self.0.create(config)
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        self.0.restore(config, log)
    }

    fn conventions(&self) -> Conventions {
        self.0.conventions()
    }
}
